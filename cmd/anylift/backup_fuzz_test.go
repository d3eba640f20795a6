package main

import (
	"strings"
	"testing"
)

// The arguments of backup and restore: any words give one FILE and a
// data directory, help, or an error, never a panic, and never an empty
// FILE or directory.
func FuzzStoreFileArgs(f *testing.F) {
	f.Add("--data-dir\x00d\x00f.db")
	f.Add("f.db\x00--data-dir=d")
	f.Add("-h")
	f.Add("--\x00-x")
	f.Add("a\x00b")
	f.Fuzz(func(t *testing.T, words string) {
		args := strings.Split(words, "\x00")
		dir, file, help, err := storeFileArgs("backup", backupUsage, args, noEnv, &strings.Builder{})
		if err == nil && !help && (file == "" || dir == "") {
			t.Fatalf("%q: no FILE and no error", args)
		}
	})
}
