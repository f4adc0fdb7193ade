// Package machine is the rapid state machine of the conformance property
// (docs/architecture.md): the World of one drawn sequence (the client
// under test or the reference client, the provider under test behind the
// fault layer, the history, the clock), and the Machine that draws its
// shopper and operator actions, probes and fault schedules, checks the
// safety invariants after every step and liveness once faults heal
// (Finish), and fails the check with the first violation (Conclude).
//
// The run around the property (package run) builds one Machine per check
// with what it knows (Check) and reads the outcome once the check ends;
// nothing here knows about rounds, statistics or reports.
package machine
