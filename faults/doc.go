// Package faults holds fault schedules — what happens to the n-th request
// on the wire — and the machinery that applies them.
//
// Index:
//   - fault.go           — Fault, Kind and the registry of kinds.
//   - one file per kind  — pass.go, delay.go, drop_request.go,
//     lose_response.go, reset.go, status.go (429 / 500 / 503 answered
//     without forwarding), slow_processing.go, hang_up.go (the client gives
//     up while the provider processes: its context is cancelled), outage.go
//     (the provider unreachable for the rest of the step), store_down.go and
//     provider_crash.go (in process, on a store), store_outage.go and
//     provider_restart.go (a provider in another process, through its
//     hooks). Each registers itself by name.
//   - one file per macro — charged_then_unreachable.go (processed past the
//     attempt timeout, then an outage for the rest of the step) and
//     slow_past_total.go (processed past the client's total timeout):
//     compound faults within one call, drawn as kinds of their own.
//   - lookup_lag.go      — a provider whose lookups lag (eventually
//     consistent), drawn once per sequence in virtual time.
//   - lifecycle.go       — Lifecycle: the hooks a Transport runs for
//     store-outage and provider-restart.
//   - transport.go       — Transport: an http.RoundTripper that applies a
//     schedule in process and records every exchange in a models.History.
//   - inprocess.go       — InProcess: the wire to an http.Handler provider,
//     serialising the provider's decisions so a history orders them exactly.
//   - clock.go           — the clock shared by client, provider and faults.
//   - gen.go             — rapid generators for faults and schedules.
//
// Nothing here imports the systems under test; conformance wires them.
package faults
