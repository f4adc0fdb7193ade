// Package doccheck has no code: its tests check the repository's own
// documentation (README.md, docs/, the Makefile and the workflows).
package doccheck
