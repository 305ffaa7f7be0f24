import crypto from 'node:crypto';

/**
 * The hosted reveal frame (GET /vault/frame): a page a client embeds in an iframe to show a card's
 * number, expiry and CVV to the cardholder. The token travels in the URL fragment
 * (`/vault/frame#token=…`), which browsers never send to a server: it cannot land in access logs,
 * proxies or a Referer header. The page asks POST /v1/vault/reveal itself (same origin) and shows
 * the values; the embedding page, on another origin, cannot read them, and the messages the frame
 * posts to it carry events only (`ready`, `revealed`, `copied`, `error`), never a value.
 */
export function framePage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Card details</title>
<style nonce="${nonce}">
  body { font: 15px/1.4 system-ui, sans-serif; margin: 0; padding: 12px; color: #111; background: #fff; }
  .row { display: flex; align-items: center; justify-content: space-between; gap: 8px; padding: 6px 0; border-bottom: 1px solid #eee; }
  .label { color: #555; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
  .value { font: 17px/1.3 ui-monospace, monospace; letter-spacing: .06em; }
  button { font: inherit; font-size: 12px; padding: 3px 8px; cursor: pointer; }
  #error { color: #a40000; }
  [hidden] { display: none !important; }
</style>
</head>
<body>
<div id="loading">Loading card details…</div>
<div id="error" role="alert" hidden></div>
<div id="card" hidden>
  <div class="row"><div><div class="label">Card number</div><div class="value" id="pan" data-field="pan"></div></div><button type="button" data-copy="pan">Copy</button></div>
  <div class="row"><div><div class="label">Expires</div><div class="value" id="expiry" data-field="expiry"></div></div><button type="button" data-copy="expiry">Copy</button></div>
  <div class="row"><div><div class="label">CVV</div><div class="value" id="cvv" data-field="cvv"></div></div><button type="button" data-copy="cvv">Copy</button></div>
</div>
<script nonce="${nonce}">
(function () {
  'use strict';
  var values = {};
  function tell(event, extra) {
    // Events only: no value ever leaves this frame.
    var message = { source: 'openbaas-vault', event: event };
    if (extra && extra.field) message.field = extra.field;
    if (extra && extra.code) message.code = extra.code;
    if (window.parent !== window) window.parent.postMessage(message, '*');
  }
  function fail(text, code) {
    document.getElementById('loading').hidden = true;
    document.getElementById('card').hidden = true;
    var box = document.getElementById('error');
    box.textContent = text;
    box.hidden = false;
    tell('error', { code: code });
  }
  var params = new URLSearchParams(location.hash.slice(1));
  var token = params.get('token');
  if (!token) { fail('This page needs a card token (#token=…) from your app.', 'TOKEN_MISSING'); return; }
  var cardId = params.get('cardId');
  if (!cardId) {
    try {
      var claims = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
      cardId = claims.card || null;
    } catch (e) { cardId = null; }
  }
  if (!cardId) { fail('This token does not name a card.', 'CARD_MISSING'); return; }
  // Drop the token from the address bar and the history once read.
  history.replaceState(null, '', location.pathname);
  tell('ready');
  fetch('/v1/vault/reveal', {
    method: 'POST',
    headers: { 'authorization': 'Bearer ' + token, 'content-type': 'application/json' },
    body: JSON.stringify({ cardId: cardId, fields: ['pan', 'cvv', 'expiry'] }),
    cache: 'no-store',
    credentials: 'omit'
  }).then(function (response) {
    return response.json().then(function (body) { return { ok: response.ok, body: body }; });
  }).then(function (result) {
    if (!result.ok) {
      var code = result.body && result.body.code;
      var text = code === 'VAULT_TOKEN_EXPIRED' ? 'This link has expired. Close it and open the card details again.'
        : code === 'RATE_LIMITED' ? 'Too many requests for this card. Try again in a minute.'
        : code === 'CARD_NOT_ACTIVE' ? 'This card is not active.'
        : 'The card details cannot be shown.';
      fail(text, code || 'ERROR');
      return;
    }
    var card = result.body.data.card;
    values.pan = card.pan;
    values.cvv = card.cvv;
    values.expiry = card.expiryDate.slice(0, 2) + '/' + card.expiryDate.slice(2);
    document.getElementById('pan').textContent = card.pan.replace(/(.{4})/g, '$1 ').trim();
    document.getElementById('expiry').textContent = values.expiry;
    document.getElementById('cvv').textContent = card.cvv;
    document.getElementById('loading').hidden = true;
    document.getElementById('card').hidden = false;
    tell('revealed');
  }).catch(function () { fail('The card details cannot be shown right now.', 'NETWORK'); });
  document.addEventListener('click', function (event) {
    var field = event.target && event.target.getAttribute && event.target.getAttribute('data-copy');
    if (!field || !values[field]) return;
    navigator.clipboard.writeText(values[field]).then(function () { tell('copied', { field: field }); }, function () { tell('error', { code: 'COPY_FAILED' }); });
  });
})();
</script>
</body>
</html>
`;
}

export function frameNonce(): string {
  return crypto.randomBytes(16).toString('base64');
}

/** The frame's Content-Security-Policy: its own nonce'd script and style, requests to its own origin only, embedding as configured. */
export function frameContentSecurityPolicy(nonce: string, frameAncestors: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors}`,
  ].join('; ');
}
