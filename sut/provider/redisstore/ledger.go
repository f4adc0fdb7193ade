package redisstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// The ledger's keys under the prefix, none with a TTL (a ledger is never
// forgotten):
//
//	charge-seq, refund-seq     INCR counters of the ids (ch_%06d, re_%06d)
//	decline-seq                INCR counter of the processed declines
//	charges, refunds           every entry's JSON, in creation order
//	charges:<account>, refunds:<account>
//	                           the entries account made, for a lookup
//	charge-account             hash: charge id → the account that made it
//	charge-left                hash: charge id → minor units not yet refunded
//
// An entry is numbered and written to all its keys by one Lua script, so
// a provider killed, or a Redis connection lost, mid-way leaves no half
// entry and no gap in the ids.

// appendLua defines append(seq, all, mine, id format, head, tail): INCR
// seq, then the entry head..id..tail on the lists all and mine; it
// returns the number and the id.
const appendLua = `local function append(seq, all, mine, idfmt, head, tail)
  local n = redis.call("INCR", seq)
  local id = string.format(idfmt, n)
  local entry = head .. id .. tail
  redis.call("RPUSH", all, entry)
  redis.call("RPUSH", mine, entry)
  return n, id
end
`

// chargeScript appends a charge (KEYS: charge-seq, charges,
// charges:<account>, charge-account, charge-left; ARGV: head, tail,
// account, amount) and makes all of it refundable; it returns the number.
var chargeScript = redis.NewScript(appendLua + `local n, id = append(KEYS[1], KEYS[2], KEYS[3], "ch_%06d", ARGV[1], ARGV[2])
redis.call("HSET", KEYS[4], id, ARGV[3])
redis.call("HSET", KEYS[5], id, ARGV[4])
return n`)

// refundScript refunds ARGV[4] minor units of charge ARGV[5] for account
// ARGV[3] (KEYS: charge-account, charge-left, refund-seq, refunds,
// refunds:<account>; ARGV[1], ARGV[2]: the entry's head and tail). It
// returns 0 when the account made no such charge, -1 when the amount is
// more than is left (nothing changes then), else the refund's number. The
// check and the decrement are one HINCRBY on Redis's int64, undone when it
// goes below zero: exact for any amount, and atomic with the append
// because a script runs alone on the server.
var refundScript = redis.NewScript(appendLua + `if redis.call("HGET", KEYS[1], ARGV[5]) ~= ARGV[3] then return 0 end
if redis.call("HINCRBY", KEYS[2], ARGV[5], "-" .. ARGV[4]) < 0 then
  redis.call("HINCRBY", KEYS[2], ARGV[5], ARGV[4])
  return -1
end
local n = append(KEYS[3], KEYS[4], KEYS[5], "re_%06d", ARGV[1], ARGV[2])
return n`)

// entryParts splits the JSON of an entry whose id is "" around the id's
// value: head ends with `"id":"`, tail starts with the closing quote.
func entryParts(v any) (head, tail string) {
	raw, _ := json.Marshal(v) // a Charge or a Refund always marshals
	const empty = `"id":""`
	i := bytes.Index(raw, []byte(empty))
	return string(raw[:i+len(empty)-1]), string(raw[i+len(empty)-1:])
}

// AddCharge numbers ch and appends it to the ledger as account's, all of
// its amount refundable (chargeScript).
func (s *Store) AddCharge(ctx context.Context, account string, ch models.Charge) (models.Charge, error) {
	ch.ID = ""
	head, tail := entryParts(ch)
	n, err := chargeScript.Run(ctx, s.c, []string{s.prefix + "charge-seq", s.prefix + "charges", s.prefix + "charges:" + account,
		s.prefix + "charge-account", s.prefix + "charge-left"}, head, tail, account, ch.Amount).Int64()
	if err != nil {
		return ch, err
	}
	ch.ID = provider.ChargeID(n)
	return ch, nil
}

// AddRefund refunds re for account in one script (refundScript): a Lua
// script and not WATCH/MULTI, because the refund's id comes from INCR
// inside the same step (a MULTI cannot use a reply it queued) and because
// two providers refunding one charge would make WATCH abort and retry,
// where the script runs once, alone, in one round trip.
func (s *Store) AddRefund(ctx context.Context, account string, re models.Refund) (models.Refund, provider.RefundVerdict, error) {
	re.ID = ""
	head, tail := entryParts(re)
	n, err := refundScript.Run(ctx, s.c, []string{s.prefix + "charge-account", s.prefix + "charge-left", s.prefix + "refund-seq",
		s.prefix + "refunds", s.prefix + "refunds:" + account}, head, tail, account, re.Amount, re.Charge).Int64()
	switch {
	case err != nil:
		return re, provider.RefundMade, err
	case n == 0:
		return re, provider.RefundNoCharge, nil
	case n < 0:
		return re, provider.RefundTooLarge, nil
	}
	re.ID = provider.RefundID(n)
	return re, provider.RefundMade, nil
}

// NextDecline numbers a decline with INCR.
func (s *Store) NextDecline(ctx context.Context) (int, error) {
	n, err := s.c.Incr(ctx, s.prefix+"decline-seq").Result()
	return int(n), err
}

// Charges reads the ledger, in id order (creation order).
func (s *Store) Charges(ctx context.Context) ([]models.Charge, error) {
	return entries[models.Charge](ctx, s, "charges")
}

// AccountCharges reads the charges account made, in id order.
func (s *Store) AccountCharges(ctx context.Context, account string) ([]models.Charge, error) {
	return entries[models.Charge](ctx, s, "charges:"+account)
}

// Refunds reads every refund, in id order.
func (s *Store) Refunds(ctx context.Context) ([]models.Refund, error) {
	return entries[models.Refund](ctx, s, "refunds")
}

// AccountRefunds reads the refunds account made, in id order.
func (s *Store) AccountRefunds(ctx context.Context, account string) ([]models.Refund, error) {
	return entries[models.Refund](ctx, s, "refunds:"+account)
}

// entries reads the ledger list under the prefix: in id order, as the
// scripts number and append each entry in one step.
func entries[E models.Charge | models.Refund](ctx context.Context, s *Store, list string) ([]E, error) {
	raws, err := s.c.LRange(ctx, s.prefix+list, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	out := make([]E, 0, len(raws))
	for _, raw := range raws {
		var e E
		if err := json.Unmarshal([]byte(raw), &e); err != nil {
			return nil, fmt.Errorf("redisstore: the ledger %s holds a bad entry: %v", s.prefix+list, err)
		}
		out = append(out, e)
	}
	return out, nil
}
