package faults

import "time"

// KindChargedThenUnreachable is a macro of two faults within one call
// (issue 28): the request is forwarded and processed slowly, past the
// client's attempt timeout (3 s), so the client gives up on a try whose
// charge lands afterwards; and from this request on the provider is
// unreachable for the rest of the step, as after KindOutage, so every
// later try of the call times out. The call ends on a timed-out try while
// an earlier try charged: the unknown outcome a client must not take for
// "nothing happened" (a resend under a new key, an attempt abandoned).
// Fault.Delay is the extra processing time (ChargedThenUnreachableDelay).
const KindChargedThenUnreachable Kind = "charged-then-unreachable"

// ChargedThenUnreachableDelay is the extra processing time of
// KindChargedThenUnreachable: 5 s, past the reference client's 3 s
// attempt timeout and short of its 10 s total timeout, off round values
// (slowOffset).
const ChargedThenUnreachableDelay = 5*time.Second + slowOffset

func init() {
	register(KindChargedThenUnreachable, kind{
		describe: func(f Fault) string { return "charged-then-unreachable " + f.Delay.String() },
		apply:    forwardSlowly,
		forwards: true,
	})
}

// startsOutage reports whether a fault of kind k makes every later request
// of its schedule an outage (Transport.begin).
func startsOutage(k Kind) bool { return k == KindOutage || k == KindChargedThenUnreachable }
