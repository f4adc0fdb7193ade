package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// commitLua defines what both commit scripts share (KEYS[1] the key;
// ARGV[1..5]: the marker the request holds, the marker's token, the
// fingerprint, the retention in ms, "1" to fence):
//
//   - fenced() answers {2, record} when the key holds this request's
//     completed answer (its token: the script ran before and its reply
//     was lost) or, when fencing, another request's completed answer to
//     the same body (the lease ran out and a retry completed the key: a
//     replay); {3} when fencing and the key holds another request's
//     marker or its answer to another body; and nil when the script may
//     go on (the marker, or no key at all: the lease ran out and nobody
//     took it);
//   - complete(status, content type, body) stores the completed record
//     with the retention TTL.
const commitLua = appendLua + `local function fenced()
  local cur = redis.call("GET", KEYS[1])
  if cur and cur ~= ARGV[1] then
    local ok, rec = pcall(cjson.decode, cur)
    if ok and type(rec) == "table" and rec.state == "completed" and
      (rec.token == ARGV[2] or (ARGV[5] == "1" and rec.fingerprint == ARGV[3])) then return {2, cur} end
    if ARGV[5] == "1" then return {3} end
  end
  return nil
end
local function complete(status, ctype, body)
  local rec = cjson.encode({state = "completed", fingerprint = ARGV[3], token = ARGV[2],
    response = {status = tonumber(status), content_type = ctype, body = body}})
  redis.call("SET", KEYS[1], rec, "PX", ARGV[4])
end
`

// commitChargeScript appends a charge as chargeScript does and stores its
// 201 under the key (KEYS[2..6]: charge-seq, charges, charges:<account>,
// charge-account, charge-left; ARGV[6..10]: the entry's head and tail,
// account, amount, Content-Type); it answers {1, number}.
var commitChargeScript = redis.NewScript(commitLua + `local f = fenced()
if f then return f end
local n, id = append(KEYS[2], KEYS[3], KEYS[4], "ch_%06d", ARGV[6], ARGV[7])
redis.call("HSET", KEYS[5], id, ARGV[8])
redis.call("HSET", KEYS[6], id, ARGV[9])
complete(201, ARGV[10], ARGV[6] .. id .. ARGV[7])
return {1, n}`)

// commitRefundScript refunds as refundScript does and stores the answer
// under the key (KEYS[2..6]: charge-account, charge-left, refund-seq,
// refunds, refunds:<account>; ARGV[6..17]: the entry's head and tail,
// account, amount, charge id, the 201's Content-Type, then status,
// Content-Type and body of the answer to no such charge and of the answer
// to more than is left); it answers {1, number}, number 0 or -1 as
// refundScript's.
var commitRefundScript = redis.NewScript(commitLua + `local f = fenced()
if f then return f end
if redis.call("HGET", KEYS[2], ARGV[10]) ~= ARGV[8] then
  complete(ARGV[12], ARGV[13], ARGV[14])
  return {1, 0}
end
if redis.call("HINCRBY", KEYS[3], ARGV[10], "-" .. ARGV[9]) < 0 then
  redis.call("HINCRBY", KEYS[3], ARGV[10], ARGV[9])
  complete(ARGV[15], ARGV[16], ARGV[17])
  return {1, -1}
end
local n, id = append(KEYS[4], KEYS[5], KEYS[6], "re_%06d", ARGV[6], ARGV[7])
complete(201, ARGV[11], ARGV[6] .. id .. ARGV[7])
return {1, n}`)

// commitDeclineScript numbers a decline (KEYS[2]: decline-seq) and stores
// its answer under the key (ARGV[6..10]: status, Content-Type, the body's
// head and tail around the decline's id, "1" when the body names it); it
// answers {1, number}.
var commitDeclineScript = redis.NewScript(commitLua + `local f = fenced()
if f then return f end
local n = redis.call("INCR", KEYS[2])
local body = ARGV[8]
if ARGV[10] == "1" then body = ARGV[8] .. string.format("dc_%06d", n) .. ARGV[9] end
complete(ARGV[6], ARGV[7], body)
return {1, n}`)

// declineID0 is the decline id CommitDecline's answer names, which the
// store replaces with the decline's own.
const declineID0 = "dc_000000"

// CommitDecline numbers a decline and stores d, its answer, under t's key
// in one script (commitDeclineScript), fenced by t's marker (commit); d's
// body names the decline as dc_000000, replaced by its number (dc_%06d).
// Without a marker it only numbers it (NextDecline): CommitUnstored.
func (s *Store) CommitDecline(ctx context.Context, t provider.Taken, d provider.Stored) (provider.Stored, provider.CommitVerdict, error) {
	head, tail, numbered := strings.Cut(string(d.Body), declineID0)
	named := func(n int64) provider.Stored {
		if numbered {
			d.Body = []byte(head + fmt.Sprintf("dc_%06d", n) + tail)
		}
		return d
	}
	if t.Token == "" {
		n, err := s.NextDecline(ctx)
		return named(int64(n)), provider.CommitUnstored, err
	}
	flag := "0"
	if numbered {
		flag = "1"
	}
	n, stored, v, err := s.commit(ctx, t, commitDeclineScript, []string{s.prefix + "decline-seq"},
		d.Status, d.ContentType, head, tail, flag)
	if err != nil || v != provider.CommitStored || stored.Status != 0 {
		return stored, v, err
	}
	return named(n), v, nil
}

// CommitCharge charges ch for account and stores its 201 under t's key in
// one script (commitChargeScript), fenced by t's marker (commit). Without
// a marker (t.Token "": the GetThenSet and ProcessWithoutLock bugs take
// no lock) it only charges (AddCharge): CommitUnstored.
func (s *Store) CommitCharge(ctx context.Context, t provider.Taken, account string, ch models.Charge) (provider.Stored, provider.CommitVerdict, error) {
	if t.Token == "" {
		ch, err := s.AddCharge(ctx, account, ch)
		return provider.Stored{Status: http.StatusCreated, Body: mustJSON(ch)}, provider.CommitUnstored, err
	}
	ch.ID = ""
	head, tail := entryParts(ch)
	const contentType = "application/json"
	n, stored, v, err := s.commit(ctx, t, commitChargeScript, []string{s.prefix + "charge-seq", s.prefix + "charges",
		s.prefix + "charges:" + account, s.prefix + "charge-account", s.prefix + "charge-left"},
		head, tail, account, ch.Amount, contentType)
	if err != nil || v != provider.CommitStored || stored.Status != 0 {
		return stored, v, err
	}
	ch.ID = provider.ChargeID(n)
	return provider.Stored{Status: http.StatusCreated, ContentType: contentType, Body: mustJSON(ch)}, v, nil
}

// CommitRefund refunds re for account and stores the answer under t's
// key in one script (commitRefundScript), fenced by t's marker (commit):
// 201 with the refund when it is made, else the answer given for no such
// charge (noCharge) or for more than is left of it (tooLarge), which name
// no refund. Without a marker it only refunds (AddRefund): CommitUnstored.
func (s *Store) CommitRefund(ctx context.Context, t provider.Taken, account string, re models.Refund, noCharge, tooLarge provider.Stored) (provider.Stored, provider.CommitVerdict, error) {
	made := func(re models.Refund) provider.Stored {
		return provider.Stored{Status: http.StatusCreated, ContentType: "application/json", Body: mustJSON(re)}
	}
	answer := func(re models.Refund, v provider.RefundVerdict) provider.Stored {
		switch v {
		case provider.RefundNoCharge:
			return noCharge
		case provider.RefundTooLarge:
			return tooLarge
		}
		return made(re)
	}
	if t.Token == "" {
		re, v, err := s.AddRefund(ctx, account, re)
		return answer(re, v), provider.CommitUnstored, err
	}
	re.ID = ""
	head, tail := entryParts(re)
	n, stored, v, err := s.commit(ctx, t, commitRefundScript, []string{s.prefix + "charge-account", s.prefix + "charge-left",
		s.prefix + "refund-seq", s.prefix + "refunds", s.prefix + "refunds:" + account},
		head, tail, account, re.Amount, re.Charge, "application/json",
		noCharge.Status, noCharge.ContentType, string(noCharge.Body), tooLarge.Status, tooLarge.ContentType, string(tooLarge.Body))
	switch {
	case err != nil || v != provider.CommitStored || stored.Status != 0:
		return stored, v, err
	case n == 0:
		return noCharge, v, nil
	case n < 0:
		return tooLarge, v, nil
	}
	re.ID = provider.RefundID(n)
	return made(re), v, nil
}

// commit runs a commit script for t with keys after t's key and args
// after the shared ARGV (commitLua). It answers the script's number and
// CommitStored when the script ran; the stored response (its Status not
// 0) and CommitStored when the key already held t's completed answer or
// another request's answer to the same body; CommitFenced when another
// request holds the key or answered another body under it. Under the
// LeaseTooShort bug it does not fence: a request that outlived its lease
// writes over the key, as glue without a fence does.
func (s *Store) commit(ctx context.Context, t provider.Taken, script *redis.Script, keys []string, args ...any) (int64, provider.Stored, provider.CommitVerdict, error) {
	if err := s.unreachable(ctx); err != nil {
		return 0, provider.Stored{}, provider.CommitUnstored, err
	}
	var marker record
	if err := json.Unmarshal([]byte(t.Token), &marker); err != nil {
		return 0, provider.Stored{}, provider.CommitUnstored, fmt.Errorf("redisstore: the marker %q is no record: %v", t.Token, err)
	}
	fence := "1"
	if s.planted.LeaseTooShort { // planted bug: LeaseTooShort
		fence = "0"
	}
	argv := append([]any{t.Token, marker.Token, t.Fingerprint, s.retentionMillis(), fence}, args...)
	res, err := script.Run(ctx, s.c, append([]string{s.keyOf(t.Key)}, keys...), argv...).Slice()
	if err != nil {
		return 0, provider.Stored{}, provider.CommitUnstored, err
	}
	code, _ := res[0].(int64)
	switch {
	case code == 1 && len(res) == 2:
		n, _ := res[1].(int64)
		return n, provider.Stored{}, provider.CommitStored, nil
	case code == 2 && len(res) == 2:
		raw, _ := res[1].(string)
		var rec record
		if err := json.Unmarshal([]byte(raw), &rec); err != nil || rec.Response == nil || rec.Response.Status == 0 {
			return 0, provider.Stored{}, provider.CommitUnstored, fmt.Errorf("redisstore: %s holds no completed record: %q", s.keyOf(t.Key), raw)
		}
		return 0, rec.Response.stored(), provider.CommitStored, nil
	case code == 3:
		return 0, provider.Stored{}, provider.CommitFenced, nil
	}
	return 0, provider.Stored{}, provider.CommitUnstored, fmt.Errorf("redisstore: the commit script answered %v", res)
}

// mustJSON is v's JSON; a Charge or a Refund always marshals.
func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
