package faults_test

import (
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/faults"
)

// A fault prints the way reports and failure messages show it.
func ExampleFault_String() {
	for _, f := range []faults.Fault{
		{Kind: faults.KindPass},
		{Kind: faults.KindDelay, Delay: 1500 * time.Millisecond},
		{Kind: faults.KindStatus429, RetryAfter: 2},
		{Kind: faults.KindStatus503},
		{Kind: faults.KindSlowProcessing, Delay: 12 * time.Second},
	} {
		fmt.Printf("%s forwards=%t\n", f, faults.Forwards(f.Kind))
	}
	// Output:
	// pass forwards=true
	// delay 1.5s forwards=true
	// 429 retry-after 2s forwards=false
	// 503 forwards=false
	// slow-processing 12s forwards=true
}
