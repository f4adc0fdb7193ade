package faults

import "time"

// KindSlowPastTotal is a macro of slow processing (issue 28): the request
// is forwarded and the provider takes Fault.Delay (SlowPastTotalDelay)
// longer to process it, past the client's whole call (its 10 s total
// timeout, tries and retry delays included). Every retry of the call meets
// the key still in flight (409) and the call ends with its outcome
// unknown; the charge lands after it ended, so only a later resend or
// reconciliation can learn it.
const KindSlowPastTotal Kind = "slow-past-total"

// SlowPastTotalDelay is KindSlowPastTotal's extra processing time: 25 s,
// past the reference client's 10 s total timeout with room for a resend
// of the key by a later step that still finds it in flight, off round
// values (slowOffset).
const SlowPastTotalDelay = 25*time.Second + slowOffset

func init() {
	register(KindSlowPastTotal, kind{
		describe: func(f Fault) string { return "slow-past-total " + f.Delay.String() },
		apply:    forwardSlowly,
		forwards: true,
	})
}
