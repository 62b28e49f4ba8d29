//go:build !unix

package launch

func RaiseFileLimit() {}
