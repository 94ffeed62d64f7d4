//go:build !unix

package fileio

// giveMadeDirs: these systems have no Unix owners (see the unix version).
func giveMadeDirs([]string) error { return nil }

// giveParentsOwner: these systems have no Unix owners.
func giveParentsOwner(*dirPin, string, *dirPin) error { return nil }
