package run

import (
	"fmt"

	"github.com/idemcheck/idemcheck/reports"
)

// writableReportDir checks, before a certification's first request, that
// the run can keep its reports in dir (reports.Writable).
func writableReportDir(dir string) error {
	if err := reports.Writable(dir); err != nil {
		return fmt.Errorf("conformance: report folder %s: not a folder the run can write its reports to (nothing sent): %v", dir, err)
	}
	return nil
}
