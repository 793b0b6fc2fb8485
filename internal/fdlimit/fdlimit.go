// Package fdlimit reads the process's limit on open files, from which
// gsq's servers derive their connection caps: a cap below the limit
// decides which connection goes, where the limit would refuse any new
// descriptor (a database file, a poll's socket) alike. Go's runtime has
// already raised the soft limit to the hard one at start on Linux and
// the BSDs (package os, since Go 1.19), so what it reads is the limit
// the process lives under.
//
// It uses the standard library only.
package fdlimit
