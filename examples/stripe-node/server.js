// A checkout service in Node on Stripe's SDK (the `stripe` npm package,
// pinned in package.json), written only against idemcheck's
// docs/client-api.md and Stripe's API reference, as a team on Stripe
// writes one. idemcheck certifies it with conformance.CheckService,
// the embedded provider speaking Stripe's API (checkout_test.go).
//
//   node server.js [--variant correct|naive] [--pool]
//
// It serves one fresh instance (docs/client-api.md, "Starting the
// service"). With --pool it serves fresh instances on demand instead, for
// a test that starts hundreds (checkout_test.go): POST /instances
// {"provider_url": "…"} on the control port it prints starts one on a
// port of its own and answers {"base_url": "…"}; DELETE
// /instances/<port> ends it. An instance is the same code either way.
//
// Settings (environment): IDEMCHECK_PROVIDER_URL, the Stripe API's base
// URL (the only line that is the harness's: the SDK's host, port and
// protocol come from it; unset, the SDK talks to api.stripe.com);
// STRIPE_SECRET_KEY, the merchant's key (a test key: the harness's
// provider takes any); ATTEMPT_TIMEOUT_MS (one try, default 3000),
// TOTAL_TIMEOUT_MS (a checkout's tries, default 10000), RETRY_DELAY_MS
// (between tries, default 1000),
// MIN_AGE_MS and ABANDON_AFTER_MS (reconciliation: an intent open this
// long since its last send is looked up, and given up without a charge
// after the second; defaults 2 and 30 minutes, on the request's
// Idemcheck-Now clock).
//
// The variants:
//
//  - correct: one PaymentIntent per payment attempt, its Idempotency-Key
//    made by the service and stored before the first send, resent on
//    the shopper's next click with the same card, and by its own retries
//    (a connection error, a timeout, 409, 429 or 5xx; never a 400, 402
//    or 422) within the total timeout; every error but a card decline is
//    an unknown outcome (the SDK shows only its last
//    try's error, and a 409, a timeout or a 5xx may hide a charge),
//    answered 202 PaymentPending and settled by a reconciliation that
//    searches the intent by metadata['merchant_reference'], each search
//    bounded by the attempt timeout (https://docs.stripe.com/search).
//  - naive: the SDK as it comes: the SDK picks a fresh key for every
//    call (stripe-node keys every POST), one call per click, and any
//    error but a decline is read as final (503 Failed).
'use strict';

const crypto = require('node:crypto');
const http = require('node:http');
const Stripe = require('stripe');

const variant = (() => {
  const i = process.argv.indexOf('--variant');
  return i > 0 ? process.argv[i + 1] : 'correct';
})();
if (variant !== 'correct' && variant !== 'naive') {
  console.error(`unknown --variant ${variant} (want correct or naive)`);
  process.exit(2);
}

const ms = (name, def) => Number(process.env[name] || def);
const attemptTimeout = ms('ATTEMPT_TIMEOUT_MS', 3000);
const totalTimeout = ms('TOTAL_TIMEOUT_MS', 10000);
const retryDelay = ms('RETRY_DELAY_MS', 1000);
const minAge = ms('MIN_AGE_MS', 2 * 60 * 1000);
const abandonAfter = ms('ABANDON_AFTER_MS', 30 * 60 * 1000);

// stripeClient is the SDK pointed at the provider at base: here is all
// that changes between production and the harness. The naive variant
// keeps the SDK's own retries (and its keys); the correct one retries
// itself, under its own key.
function stripeClient(base) {
  const o = { timeout: attemptTimeout, telemetry: false };
  if (variant === 'correct') o.maxNetworkRetries = 0;
  if (base) {
    const u = new URL(base);
    Object.assign(o, { host: u.hostname, port: u.port, protocol: u.protocol.replace(':', '') });
  }
  return new Stripe(process.env.STRIPE_SECRET_KEY || 'sk_test_bookstore', o);
}

// instance is one fresh checkout service (no orders, no attempts) paying
// through the provider at base: its request handler.
function instance(base) {
  const stripe = stripeClient(base);

  // The store: in memory (no restart capability).
  const orders = new Map(); // id → {id, total, currency, status, provider_charge_id}
  const attempts = []; // see docs/client-api.md, GET /state
  const cards = new Map(); // attempt id → card token (test tokens only)
  let nextOrder = 1;

  // now is the run's clock (Idemcheck-Now), the wall clock without it.
  function now(req) {
    const h = req.headers['idemcheck-now'];
    const t = h ? Date.parse(h) : NaN;
    return Number.isNaN(t) ? Date.now() : t;
  }

  // opts are the SDK's request options of a provider call made for req:
  // the harness's operation id sent on (docs/client-api.md, Idemcheck-Op),
  // so that it judges retries and 409s per call.
  function opts(req, more) {
    const op = req.headers['idemcheck-op'];
    return Object.assign(op ? { headers: { 'Idemcheck-Op': op } } : {}, more);
  }

  // reference is an attempt's merchant reference, as docs/client-api.md
  // has it: bookstore-<order id>-<attempt id as 32 hex digits>.
  const reference = (a) => `bookstore-${a.order_id}-${a.id.replaceAll('-', '')}`;

  // intent is the PaymentIntent a checkout confirms.
  function intent(order, card, ref) {
    return {
      amount: order.total, currency: order.currency.toLowerCase(), payment_method: card, confirm: true,
      description: `Bookstore order ${order.id}`, metadata: { merchant_reference: ref },
    };
  }

  // declined reports whether err is Stripe's card decline (402 card_error).
  const declined = (err) => err && err.type === 'StripeCardError' && err.statusCode === 402;

  // paid is the answer of a succeeded intent.
  const chargeOf = (pi) => (typeof pi.latest_charge === 'string' ? pi.latest_charge : (pi.latest_charge || {}).id || '');

  async function checkoutNaive(req, order, card) {
    try {
      const pi = await stripe.paymentIntents.create(intent(order, card, reference({ order_id: order.id, id: crypto.randomUUID() })), opts(req));
      if (pi.status === 'succeeded') {
        order.status = 'Paid';
        order.provider_charge_id = chargeOf(pi);
        return [200, { charge_id: order.provider_charge_id }];
      }
    } catch (err) {
      if (declined(err)) return [402, { error: 'declined' }];
    }
    return [503, { error: 'payment failed' }];
  }

  const openAttempt = (orderId) => attempts.find((a) => a.order_id === orderId && a.status === 'Open');

  async function checkoutCorrect(req, order, card) {
    if (order.status === 'Paid') return [200, { charge_id: order.provider_charge_id }];
    const t = now(req);
    let a = openAttempt(order.id);
    if (a && cards.get(a.id) !== card) {
      return [409, { error: 'a previous payment of this order is still being verified' }];
    }
    if (a && t - Date.parse(a.created_at) >= 23 * 3600 * 1000) {
      return [202, { status: 'PaymentPending' }]; // near Stripe's 24 h key window: never resent
    }
    if (!a) {
      // The key is the service's, stored before the first send.
      a = {
        id: crypto.randomUUID(), order_id: order.id, idempotency_key: crypto.randomUUID(), amount: order.total,
        currency: order.currency, card_token_hash: crypto.createHash('sha256').update(card).digest('hex'),
        created_at: new Date(t).toISOString(), status: 'Open', provider_charge_id: '', last_sent_at: '',
      };
      attempts.push(a);
      cards.set(a.id, card);
      order.status = 'PaymentPending';
    }
    a.last_sent_at = new Date(t).toISOString();
    const deadline = Date.now() + totalTimeout;
    for (let try_ = 0; ; try_++) {
      try {
        const pi = await stripe.paymentIntents.create(intent(order, card, reference(a)),
          opts(req, { idempotencyKey: a.idempotency_key, timeout: Math.max(1, Math.min(attemptTimeout, deadline - Date.now())) }));
        if (pi.status === 'succeeded') {
          if (a.status === 'Open') settle(a, chargeOf(pi));
          return [200, { charge_id: chargeOf(pi) }];
        }
        break;
      } catch (err) {
        if (declined(err)) {
          if (a.status === 'Open') a.status = 'Declined';
          if (!openAttempt(order.id) && order.status !== 'Paid') order.status = 'Placed';
          return [402, { error: 'declined' }];
        }
        if (!retryable(err) || try_ >= 3 || Date.now() + retryDelay >= deadline) break;
        await new Promise((r) => setTimeout(r, retryDelay));
      }
    }
    return [202, { status: 'PaymentPending' }]; // anything else may hide a charge
  }

  // retryable reports whether a try that failed with err may be sent again
  // under its key: no answer (a connection error, a timeout), 409, 429 or
  // a 5xx; never a 400, 402 or 422 (the same request would be refused again).
  function retryable(err) {
    const s = err && err.statusCode;
    return !s || s === 409 || s === 429 || s >= 500;
  }

  function settle(a, charge) {
    a.status = 'Succeeded';
    a.provider_charge_id = charge;
    const o = orders.get(a.order_id);
    o.status = 'Paid';
    o.provider_charge_id = charge;
  }

  // find is the charge of ref's succeeded PaymentIntent, '' for none, by
  // Stripe's search, bounded by the attempt timeout.
  async function find(req, ref) {
    const res = await stripe.paymentIntents.search(
      { query: `metadata['merchant_reference']:'${ref}'`, limit: 10 }, opts(req, { timeout: attemptTimeout }));
    const pi = res.data.find((p) => p.status === 'succeeded');
    return pi ? chargeOf(pi) : '';
  }

  async function reconcile(req) {
    if (variant === 'naive') return [200, { summary: 'nothing to reconcile' }];
    const t = now(req);
    const due = attempts.filter((a) => a.status === 'Open' && t - Date.parse(a.last_sent_at) >= minAge);
    let settled = 0;
    let failed = 0;
    for (const seen of due) {
      const sent = seen.last_sent_at;
      let charge;
      try {
        charge = await find(req, reference(seen));
      } catch {
        failed++;
        continue; // not known: asked again next time
      }
      if (seen.status !== 'Open') continue;
      if (charge) {
        settle(seen, charge);
        settled++;
      } else if (seen.last_sent_at === sent && t - Date.parse(sent) >= abandonAfter) {
        seen.status = 'Abandoned';
        const o = orders.get(seen.order_id);
        if (o.status !== 'Paid' && !openAttempt(o.id)) o.status = 'Placed';
        settled++;
      }
    }
    return [200, { summary: `checked ${due.length}, settled ${settled}, errors ${failed}` }];
  }

  async function route(req) {
    const path = new URL(req.url, 'http://x').pathname;
    let m;
    if (req.method === 'GET' && path === '/') {
      return [200, { capabilities: variant === 'correct' ? ['state'] : [] }];
    }
    if (req.method === 'POST' && path === '/orders') {
      const { amount, currency } = await body(req);
      const o = { id: nextOrder++, total: amount, currency, status: 'Placed', provider_charge_id: '' };
      orders.set(o.id, o);
      return [201, { id: o.id }];
    }
    if (req.method === 'POST' && (m = path.match(/^\/orders\/(\d+)\/checkout$/))) {
      const o = orders.get(Number(m[1]));
      if (!o) return [404, { error: 'no such order' }];
      const { card_token: card } = await body(req);
      return variant === 'correct' ? checkoutCorrect(req, o, card) : checkoutNaive(req, o, card);
    }
    if (req.method === 'GET' && (m = path.match(/^\/orders\/(\d+)$/))) {
      const o = orders.get(Number(m[1]));
      return o ? [200, o] : [404, { error: 'no such order' }];
    }
    if (req.method === 'POST' && path === '/reconcile') return reconcile(req);
    if (req.method === 'GET' && path === '/state' && variant === 'correct') {
      return [200, { orders: [...orders.values()], attempts }];
    }
    return [404, { error: 'not found' }];
  }

  return (req, res) => {
    route(req).then(
      ([status, out]) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(out));
      },
      (err) => {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: String(err && err.message) }));
      });
  };
}

// body reads a JSON body of at most 64 KiB.
function body(req) {
  return new Promise((resolve, reject) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c) => {
      raw += c;
      if (raw.length > 64 << 10) reject(new Error('body too large'));
    });
    req.on('end', () => {
      try {
        resolve(raw ? JSON.parse(raw) : {});
      } catch (e) {
        reject(e);
      }
    });
    req.on('error', reject);
  });
}

// serve listens on a free loopback port with handler, and calls back
// with the server once it serves.
function serve(handler, then) {
  const server = http.createServer(handler);
  server.listen(0, '127.0.0.1', () => then(server));
}

if (!process.argv.includes('--pool')) {
  serve(instance(process.env.IDEMCHECK_PROVIDER_URL), (server) => {
    console.log(`listening on http://127.0.0.1:${server.address().port}`);
  });
} else {
  const running = new Map(); // port → server
  serve((req, res) => {
    const answer = (status, out) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(out));
    };
    const m = req.url.match(/^\/instances\/(\d+)$/);
    if (req.method === 'POST' && req.url === '/instances') {
      body(req).then(({ provider_url: base }) => serve(instance(base), (server) => {
        const port = server.address().port;
        running.set(port, server);
        answer(201, { base_url: `http://127.0.0.1:${port}` });
      }), (err) => answer(400, { error: String(err.message) }));
    } else if (req.method === 'DELETE' && m && running.has(Number(m[1]))) {
      const server = running.get(Number(m[1]));
      running.delete(Number(m[1]));
      server.closeAllConnections();
      server.close(() => answer(204, {}));
    } else {
      answer(404, { error: 'not found' });
    }
  }, (server) => console.log(`pool listening on http://127.0.0.1:${server.address().port}`));
}
