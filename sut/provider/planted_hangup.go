package provider

import "net/http"

// plantedHangUp is process's branch for the FreeKeyOnHangUp bug, called
// under p.mu once rec holds its result: if r's client hung up (its context
// is cancelled), the key is released and the response not stored, though
// the charge was made — a middleware that treats a dropped connection as
// "not processed". The reference provider stores the response whatever
// the client did (docs/provider-api.md).
func (p *Provider) plantedHangUp(key string, rec *record, r *http.Request) {
	if p.planted.FreeKeyOnHangUp && r.Context().Err() != nil && p.keys[key] == rec { // planted bug: FreeKeyOnHangUp
		delete(p.keys, key)
	}
}
