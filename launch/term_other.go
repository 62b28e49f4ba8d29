//go:build !unix

package launch

import "os"

func termWidth(*os.File) int { return 0 }
