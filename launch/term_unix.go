//go:build unix

package launch

import (
	"os"

	"golang.org/x/sys/unix"
)

// termWidth returns the terminal's width in columns, 0 when f is not a
// terminal or has no size.
func termWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
