package certify

import (
	"errors"
	"fmt"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// ErrKeyForm is returned by Run, with every requirement INCONCLUSIVE and
// the answers in the reason, when the preflight's creates were refused
// outright (400 of the dialect) in both key forms (the quoted
// Structured Field String and the bare token): nothing can be judged on a
// provider that refuses every keyed create, and one cause says so once.
var ErrKeyForm = errors.New("certify: no key form accepted")

// keyForms is what one key sent in both forms showed: the quoted key
// first, then the bare token of the same key, each settled (Options.MaxTries).
type keyForms struct {
	quoted, bare answer
	qSends       int
	bSends       int
}

// accepted reports whether a create was taken, whatever it decided: a
// charge (2xx) or a decline (402), of the dialect.
func accepted(a answer) bool {
	return a.err == nil && (a.status >= 200 && a.status <= 299 || a.status == 402) && a.ofDialect()
}

// form is the key form the rest of the run uses: quoted when the
// provider took it (docs/provider-api.md's form), else bare when it took
// that, else "".
func (k keyForms) form() string {
	switch {
	case accepted(k.quoted):
		return remote.KeyFormQuoted
	case accepted(k.bare):
		return remote.KeyFormBare
	}
	return ""
}

// answers names both answers, for a reason: "the quoted key answered 400
// (1 send), the bare token 201 ch_000001 (1 send)".
func (k keyForms) answers() string {
	return fmt.Sprintf("the quoted key answered %s (%s), the bare token of the same key %s (%s)",
		k.quoted.short(), sends(k.qSends), k.bare.short(), sends(k.bSends))
}

func sends(n int) string {
	if n == 1 {
		return "1 send"
	}
	return fmt.Sprintf("%d sends", n)
}

// probeKeyForms sends one create under a new key as a Structured Field
// String, then the same create under the key's bare token, each settled
// like any unknown outcome (settle). It is the preflight's second step
// and, when the profile pins key_form, the quoted-key requirement's.
func (r *runner) probeKeyForms() (keyForms, error) {
	key, body := newKey(), r.charge("key-form")
	var k keyForms
	var err error
	if k.quoted, k.qSends, err = r.settle(models.FormatKey(key), body); err != nil {
		return k, err
	}
	k.bare, k.bSends, err = r.settle(key, body)
	return k, err
}

// verdict judges quoted-key-equals-bare-key on k: both forms accepted and
// the bare token answered the quoted key's replay, else FAIL naming the
// refused or distinct form, or INCONCLUSIVE when neither was accepted.
func (k keyForms) verdict() (verdict, string) {
	q, b := accepted(k.quoted), accepted(k.bare)
	switch {
	case q && b && same(k.quoted, k.bare):
		return pass, ""
	case q && b:
		return fail, fmt.Sprintf("the bare token after the quoted key answered %s, not the replay of %s: the two forms are two keys", k.bare.short(), k.quoted.short())
	case q:
		return fail, "the bare token is refused: " + k.answers() + "; the run sends keys quoted"
	case b:
		return fail, "the quoted (Structured Field String) key is refused: " + k.answers() + "; the run sends bare tokens"
	}
	return inc, "no create was accepted in either key form: " + k.answers()
}

// learnKeyForms is the preflight's second step: unless the dialect (stripe:
// always bare) or the profile (key_form) fixes the form, it sends one key
// in both forms (probeKeyForms) and sets the form every later create of
// the run is sent in; the quoted-key requirement is judged on these
// answers (r.forms). It returns an error wrapping ErrKeyForm when both
// forms were refused outright (refused: a 400 of the dialect). Neither
// form accepted for another reason (no answer, a transient status, a
// redirect, a body not of the dialect), a budget or a time-out leave the
// form quoted and each requirement to say what it got.
func (r *runner) learnKeyForms() error {
	r.form = remote.KeyFormQuoted
	switch {
	case r.p.Dialect() == remote.DialectStripe:
		r.form = remote.KeyFormBare
		return nil
	case r.p.Profile().KeyForm != "":
		r.form = r.p.Profile().KeyForm
		return nil
	}
	from := len(r.hist.Snapshot().Exchanges)
	k, err := r.probeKeyForms()
	if err != nil {
		return nil
	}
	r.forms = &k
	r.formsEvidence = r.hist.Snapshot().Exchanges[from:]
	if f := k.form(); f != "" {
		r.form = f
		return nil
	}
	if refused(k.quoted) && refused(k.bare) {
		return keyFormError{k.answers()}
	}
	return nil // no answer, a transient one or one not of the dialect: each requirement says what it got
}

// refused reports whether a create was refused as a bad request in the
// dialect: 400 with a body of the dialect (docs/provider-api.md answers a
// malformed key 400; a 404 or 401 is about the path or the account).
func refused(a answer) bool {
	return a.err == nil && a.status == 400 && a.ofDialect()
}

// keyFormError is learnKeyForms' failure: Is ErrKeyForm.
type keyFormError struct{ answers string }

func (e keyFormError) Error() string {
	return fmt.Sprintf("%v: %s; a provider that refuses every keyed create cannot be judged (nothing else was sent)", ErrKeyForm, e.answers)
}
func (e keyFormError) Is(target error) bool { return target == ErrKeyForm }

// newKeyHeader is a new key, as its Idempotency-Key header in the run's
// key form.
func (r *runner) newKeyHeader() string {
	if r.form == remote.KeyFormBare {
		return newKey()
	}
	return models.FormatKey(newKey())
}

// checkQuotedKey judges quoted-key-equals-bare-key on the preflight's
// answers (their exchanges are its evidence), or, when the profile pins
// key_form, on a probe of its own.
func checkQuotedKey(r *runner) (verdict, string, error) {
	if r.p.Dialect() == remote.DialectStripe {
		return nj, "the stripe dialect sends every key as a bare token: the quoted form never reaches the provider", nil
	}
	k := r.forms
	if k != nil {
		r.prior = r.formsEvidence
	} else {
		probed, err := r.probeKeyForms()
		if err != nil {
			return inc, "", err
		}
		k = &probed
	}
	v, reason := k.verdict()
	return r.judged(v, reason)
}
