package results

// WriteFileAtomic writes data to path through a temporary file beside it
// (".<base>.<random>", mode 0666 less the umask) renamed into place, so a
// reader — or a process stopped halfway — never sees half a file: path
// holds the old content or the new one. The temporary file is removed on
// error. Safe for concurrent use on different paths.
func WriteFileAtomic(path string, data []byte) error {
	return writeFileAtomic(path, data)
}
