package faults_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
)

// store-down and provider-crash reach the provider as marks on the
// request it serves (the Redis store and the provider process read them),
// only on the request they were drawn for; provider-crash loses the answer.
func TestStoreFaultsMarkTheirRequest(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, faults.Fault{Kind: faults.KindStoreDown}, faults.Fault{Kind: faults.KindProviderCrash}, faults.Fault{Kind: faults.KindPass})
		type mark struct{ down, crash bool }
		var seen []mark
		prov := r.wire.Handler
		r.wire.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			seen = append(seen, mark{faults.StoreDown(req.Context()), faults.ProviderCrash(req.Context())})
			prov.ServeHTTP(w, req)
		})
		ctx := t.Context()
		assert.Equal(t, http.StatusCreated, r.post(ctx, `"k-1"`, visa).status)
		crashed := r.post(ctx, `"k-2"`, visa)
		require.Error(t, crashed.err)
		assert.ErrorIs(t, crashed.err, faults.ErrInjected)
		assert.Equal(t, http.StatusCreated, r.post(ctx, `"k-3"`, visa).status)
		assert.Equal(t, []mark{{down: true}, {crash: true}, {}}, seen)
		assert.Equal(t, "provider-crash", faults.Fault{Kind: faults.KindProviderCrash, Delay: time.Second}.String())
	})
}
