//go:build unix

package localstore

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Lock takes the folder's lock file, so that two commands never load and
// save the same folder at once (the later save would drop the other's
// writes). The lock goes with the process: a killed command leaves none.
func Lock(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, LockName), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s is in use by another tablekit command (%v)", dir, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
