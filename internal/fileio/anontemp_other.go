//go:build !linux

package fileio

import (
	"errors"
	"os"
)

// openAnonTemp: files without a name are a Linux feature here (O_TMPFILE); elsewhere a
// rewrite's temp is named from the start (announced first).
func openAnonTemp(*dirPin, string, string) (*os.File, error) { return nil, errors.ErrUnsupported }

func linkAnonTemp(*os.File, *dirPin, string) error { return errors.ErrUnsupported }
