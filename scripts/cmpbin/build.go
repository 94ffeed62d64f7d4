package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// version is the version string both binaries are built with (main.version), so that
// --version, reports and plan files say the same of both.
const version = "cmpbin"

// buildRevision builds sessionfix of rev ("." is the working tree of repo as it is, else a git
// revision, extracted with git archive into dir/src) into dir/sessionfix. A commit's binary is
// kept in the user's cache directory (sessionfix-cmpbin/<commit>-<go version>) and taken from
// there next time. It returns the binary and what was built (the commit, or "working tree at
// <commit>").
func buildRevision(ctx context.Context, repo, rev, dir string) (bin, desc string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	src := repo
	head, _ := command(ctx, repo, nil, "git", "rev-parse", "--short=12", "HEAD")
	desc = "working tree at " + strings.TrimSpace(head)
	bin = filepath.Join(dir, "sessionfix")
	cached := ""
	if rev != "." {
		hash, err := command(ctx, repo, nil, "git", "rev-parse", "--verify", rev+"^{commit}")
		if err != nil {
			return "", "", err
		}
		hash = strings.TrimSpace(hash)
		desc = hash[:12]
		// A commit's binary is kept for the next comparison (same commit, same Go).
		goVersion, _ := command(ctx, repo, nil, "go", "env", "GOVERSION")
		if c, err := os.UserCacheDir(); err == nil {
			cached = filepath.Join(c, "sessionfix-cmpbin", hash+"-"+strings.TrimSpace(goVersion))
			if _, err := os.Stat(cached); err == nil {
				return cached, desc, nil
			}
		}
		src = filepath.Join(dir, "src")
		if err := extractRevision(ctx, repo, hash, src); err != nil {
			return "", "", err
		}
	}
	if _, err := command(ctx, src, nil, "go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-X main.version="+version, "-o", bin, "./cmd/sessionfix"); err != nil {
		return "", "", err
	}
	if cached != "" && os.MkdirAll(filepath.Dir(cached), 0o755) == nil && copyFile(bin, cached+".tmp", 0o755) == nil {
		_ = os.Rename(cached+".tmp", cached)
	}
	return bin, desc, nil
}

// extractRevision writes the tree of commit into dir (git archive, read here: no tar needed).
func extractRevision(ctx context.Context, repo, commit, dir string) error {
	cmd := exec.CommandContext(ctx, "git", "archive", "--format=tar", commit)
	cmd.Dir = repo
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	terr := untar(out, dir)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %w: %s", commit, err, stderr.String())
	}
	return terr
}

// untar extracts the regular files, directories and symbolic links of a tar stream into dir.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if name == "." || filepath.IsAbs(name) || strings.HasPrefix(name, "..") {
			continue
		}
		p := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, os.FileMode(h.Mode)&0o777|0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, p); err != nil {
				return err
			}
		}
	}
}

// command runs name with args in dir (env appended to the caller's) and returns its standard
// output; an error carries its standard error.
func command(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}
