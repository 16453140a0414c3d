// The Market view (server mode only: the listings come from the server's
// off-chain index, GET /v1/market/…): browse open alias listings; buy at a
// fixed price; bid on an auction (the least next bid, the end and the
// anti-snipe rule shown); settle an ended auction; cancel one's own listing
// without bids; list one's alias; offer an alias to a wallet for a fee;
// accept an offer addressed to me or withdraw my own. Domains: list one I am
// the authority of (price, optional named buyer, a term of at most 7 days),
// buy one (a listing named for another wallet is shown as reserved), cancel
// my listing, return an expired one to its holder. Every action is
// prepared from a fresh chain read and confirmed on the sheet
// (action-sheet.tsx); the wallet in the page signs.
import { useEffect, useState } from 'preact/hooks';
import { formatSol } from '../chain/compose.ts';
import {
  DOMAIN_LISTING_MAX_DAYS,
  prepareAccept,
  prepareBid,
  prepareBuy,
  prepareBuyDomain,
  prepareCancel,
  prepareCancelDomain,
  prepareList,
  prepareListDomain,
  prepareOffer,
  prepareSettle,
  prepareWithdraw,
} from '../chain/market.ts';
import type { MarketListing, MarketOffer } from '../server/api.ts';
import { useApp } from '../session.ts';
import { useActionSheet } from './action-sheet.tsx';
import { Countdown } from './countdown.tsx';
import { Field, short } from './widgets.tsx';

const label = (row: { name: string | null; item?: string; alias?: string }) =>
  row.name ?? `alias account ${short(row.item ?? row.alias ?? '')}`;

/** A labelled one-line text input (decimal amounts get the numeric keyboard). */
function TextField(p: {
  label: string;
  hint?: string | undefined;
  mode?: 'decimal' | 'numeric' | undefined;
  value: string;
  set: (value: string) => void;
}) {
  return (
    <Field label={p.label} hint={p.hint}>
      <input
        type="text"
        inputMode={p.mode}
        spellcheck={p.mode === undefined ? false : undefined}
        value={p.value}
        onInput={(e) => p.set(e.currentTarget.value)}
      />
    </Field>
  );
}

/** The text fields of a form whose state is one object of strings, one field per key. */
function TextFields<T extends Record<string, string>>(p: {
  value: T;
  set: (value: T) => void;
  fields: { key: keyof T & string; label: string; hint?: string; mode?: 'decimal' | 'numeric' }[];
}) {
  return (
    <>
      {p.fields.map((f) => (
        <TextField
          key={f.key}
          label={f.label}
          hint={f.hint}
          mode={f.mode}
          value={p.value[f.key] ?? ''}
          set={(v) => p.set({ ...p.value, [f.key]: v })}
        />
      ))}
    </>
  );
}

export function MarketView() {
  const app = useApp();
  const s = app.session;
  const me = s.wallet.address;
  const [listings, setListings] = useState<MarketListing[] | null>(null);
  const [offers, setOffers] = useState<{ received: MarketOffer[]; made: MarketOffer[] } | null>(null);
  const [skew, setSkew] = useState(0);
  const [refreshedAt, setRefreshedAt] = useState<number | null>(null);
  const [bids, setBids] = useState<Record<string, string>>({});
  const [sell, setSell] = useState({
    alias: '',
    mode: 'fixed' as 'fixed' | 'auction',
    price: '',
    hours: '24',
    antisnipe: '10',
  });
  const [offer, setOffer] = useState({ alias: '', recipient: '', fee: '', days: '7' });
  const [sellDomain, setSellDomain] = useState({ domain: '', price: '', buyer: '', days: '3' });
  const [buyDomain, setBuyDomain] = useState('');
  const ctx = { conn: s.conn, programId: s.programId, wallet: s.wallet.publicKey };

  const { prepare, preparing, setError, status, sheet } = useActionSheet(() => load(true), 'market-notice');
  const load = async (fresh = false) => {
    const api = s.api;
    if (!api) return;
    try {
      const [l, o] = await Promise.all([api.marketListings({ fresh }), api.marketOffers(fresh)]);
      setListings(l.listings);
      setOffers({ received: o.received, made: o.made });
      setSkew(l.chain_time - Date.now() / 1000);
      setRefreshedAt(l.refreshed_at);
    } catch (err) {
      setError(app.errorText(err));
    }
  };
  useEffect(() => {
    void load();
  }, []);

  if (!s.api) return <p>The marketplace needs the server's index: switch to server mode in Settings.</p>;

  return (
    <section aria-labelledby="market-title">
      <h1 id="market-title" tabIndex={-1}>
        Market
      </h1>
      {status}
      <h2>Open listings</h2>
      <p class="hint">
        From this server's index of the chain
        {refreshedAt !== null && `, read at ${new Date(refreshedAt).toLocaleTimeString()}`}.{' '}
        <button type="button" class="link" onClick={() => load(true)}>
          Refresh
        </button>
      </p>
      {listings === null ? (
        <p>Loading…</p>
      ) : listings.length === 0 ? (
        <p data-testid="no-listings">Nothing is listed.</p>
      ) : (
        <ul class="listings">
          {listings.map((l) => {
            const mine = l.holder === me;
            if (l.kind === 'domain') {
              const domain = l.name ?? '';
              const mayBuy = !mine && !l.expired && (l.buyer === null || l.buyer === me) && domain !== '';
              return (
                <li key={l.address} class="card" data-testid={`listing-${l.name ?? l.item}`}>
                  <h3>{l.name ?? `domain account ${short(l.item)}`}</h3>
                  <dl class="headers">
                    <dt>Holder</dt>
                    <dd title={l.holder}>{mine ? 'you' : short(l.holder)}</dd>
                    <dt>Price</dt>
                    <dd data-testid="listing-price">{formatSol(BigInt(l.price_lamports))} SOL</dd>
                    <dt>For</dt>
                    <dd data-testid="listing-buyer" title={l.buyer ?? undefined}>
                      {l.buyer === null
                        ? 'anyone'
                        : l.buyer === me
                          ? 'you (offered to you)'
                          : mine
                            ? short(l.buyer)
                            : 'reserved for another wallet'}
                    </dd>
                    <dt>Expires</dt>
                    <dd data-testid="listing-expires">
                      <Countdown at={l.expires_at ?? 0} skew={skew} past="expired: anyone may return it" />
                    </dd>
                  </dl>
                  <p class="actions">
                    {mayBuy && (
                      <button
                        type="button"
                        disabled={preparing}
                        onClick={() => prepare(() => prepareBuyDomain(ctx, { domain }))}
                      >
                        Buy {domain}
                      </button>
                    )}
                    {mine && domain !== '' && (
                      <button
                        type="button"
                        disabled={preparing}
                        onClick={() => prepare(() => prepareCancelDomain(ctx, { domain }))}
                      >
                        Cancel listing
                      </button>
                    )}
                    {!mine && l.expired && domain !== '' && (
                      <button
                        type="button"
                        disabled={preparing}
                        onClick={() => prepare(() => prepareCancelDomain(ctx, { domain }))}
                      >
                        Return {domain} to its holder
                      </button>
                    )}
                  </p>
                </li>
              );
            }
            const auction = l.mode === 'auction';
            const hasBids = l.high_bidder !== null;
            return (
              <li key={l.address} class="card" data-testid={`listing-${l.name ?? l.item}`}>
                <h3>{label(l)}</h3>
                <dl class="headers">
                  <dt>Holder</dt>
                  <dd title={l.holder}>{mine ? 'you' : short(l.holder)}</dd>
                  <dt>{auction ? 'Reserve' : 'Price'}</dt>
                  <dd data-testid="listing-price">{formatSol(BigInt(l.price_lamports))} SOL</dd>
                  {auction && (
                    <>
                      <dt>High bid</dt>
                      <dd data-testid="listing-high-bid">
                        {hasBids
                          ? `${formatSol(BigInt(l.high_bid_lamports))} SOL by ${l.high_bidder === me ? 'you' : short(l.high_bidder ?? '')}`
                          : 'no bids yet'}
                      </dd>
                      <dt>Ends</dt>
                      <dd data-testid="listing-ends">
                        <Countdown at={l.ends_at ?? 0} skew={skew} past="ended: settle it" />
                      </dd>
                    </>
                  )}
                </dl>
                {auction && !l.ended && !mine && (
                  <form
                    onSubmit={(e) => {
                      e.preventDefault();
                      void prepare(() =>
                        prepareBid(ctx, { item: l.item, label: label(l), amount: bids[l.address] ?? '' }),
                      );
                    }}
                  >
                    <Field
                      label={`Your bid on ${label(l)} (SOL)`}
                      hint={`Minimum next bid ${formatSol(BigInt(l.min_bid_lamports ?? '0'))} SOL (the reserve first, then the high bid plus 5 %, at least 0.001 SOL).${l.antisnipe_window_secs > 0 ? ` Anti-snipe: a bid in the last ${Math.round(l.antisnipe_window_secs / 60)} min moves the end to ${Math.round(l.antisnipe_window_secs / 60)} min after it.` : ''}`}
                    >
                      <input
                        type="text"
                        inputMode="decimal"
                        value={bids[l.address] ?? ''}
                        onInput={(e) => setBids({ ...bids, [l.address]: e.currentTarget.value })}
                      />
                    </Field>
                    <button type="submit" disabled={preparing}>
                      Review bid
                    </button>
                  </form>
                )}
                <p class="actions">
                  {!auction && !mine && (
                    <button
                      type="button"
                      disabled={preparing}
                      onClick={() => prepare(() => prepareBuy(ctx, { item: l.item, label: label(l) }))}
                    >
                      Buy {label(l)}
                    </button>
                  )}
                  {auction && l.ended && (
                    <button
                      type="button"
                      disabled={preparing}
                      onClick={() => prepare(() => prepareSettle(ctx, { item: l.item, label: label(l) }))}
                    >
                      Settle
                    </button>
                  )}
                  {mine && !hasBids && (
                    <button
                      type="button"
                      disabled={preparing}
                      onClick={() => prepare(() => prepareCancel(ctx, { item: l.item, label: label(l) }))}
                    >
                      Cancel listing
                    </button>
                  )}
                </p>
              </li>
            );
          })}
        </ul>
      )}

      <h2>Offers to you</h2>
      {offers && offers.received.length === 0 && <p>None.</p>}
      <ul class="listings">
        {offers?.received.map((o) => (
          <li key={o.address} class="card" data-testid={`offer-${o.name ?? o.alias}`}>
            <p>
              <strong>{label(o)}</strong> from {short(o.holder)} for {formatSol(BigInt(o.fee_lamports))} SOL,
              open until <Countdown at={o.expires_at} skew={skew} past="expired" />
            </p>
            {!o.expired && (
              <button
                type="button"
                disabled={preparing}
                onClick={() => prepare(() => prepareAccept(ctx, { alias: o.alias, label: label(o) }))}
              >
                Accept {label(o)}
              </button>
            )}
          </li>
        ))}
      </ul>
      <h2>Your offers</h2>
      {offers && offers.made.length === 0 && <p>None.</p>}
      <ul class="listings">
        {offers?.made.map((o) => (
          <li key={o.address} class="card">
            <p>
              <strong>{label(o)}</strong> to {short(o.recipient)} for {formatSol(BigInt(o.fee_lamports))} SOL,
              open until <Countdown at={o.expires_at} skew={skew} past="expired" />
            </p>
            <button
              type="button"
              disabled={preparing}
              onClick={() => prepare(() => prepareWithdraw(ctx, { alias: o.alias, label: label(o) }))}
            >
              Withdraw
            </button>
          </li>
        ))}
      </ul>

      <h2>Sell an alias</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void prepare(() =>
            prepareList(ctx, {
              alias: sell.alias,
              mode: sell.mode,
              price: sell.price,
              endsInHours: sell.hours,
              antisnipeMinutes: sell.antisnipe,
            }),
          );
        }}
      >
        <TextField label="Alias to sell" value={sell.alias} set={(v) => setSell({ ...sell, alias: v })} />
        <fieldset class="confirm-inline">
          <legend>Kind of sale</legend>
          <label>
            <input
              type="radio"
              name="sale-mode"
              checked={sell.mode === 'fixed'}
              onChange={() => setSell({ ...sell, mode: 'fixed' })}
            />{' '}
            Fixed price
          </label>
          <label>
            <input
              type="radio"
              name="sale-mode"
              checked={sell.mode === 'auction'}
              onChange={() => setSell({ ...sell, mode: 'auction' })}
            />{' '}
            Auction
          </label>
        </fieldset>
        <TextField
          label={sell.mode === 'fixed' ? 'Price (SOL)' : 'Reserve, the lowest first bid (SOL)'}
          mode="decimal"
          value={sell.price}
          set={(v) => setSell({ ...sell, price: v })}
        />
        {sell.mode === 'auction' && (
          <>
            <TextField
              label="Ends in (hours)"
              hint="At most 720 hours (30 days): the program refuses a longer auction."
              mode="decimal"
              value={sell.hours}
              set={(v) => setSell({ ...sell, hours: v })}
            />
            <TextField
              label="Anti-snipe window (minutes)"
              hint="A bid this close to the end moves the end to this long after the bid (0 = off)."
              mode="numeric"
              value={sell.antisnipe}
              set={(v) => setSell({ ...sell, antisnipe: v })}
            />
          </>
        )}
        <button type="submit" disabled={preparing}>
          Review listing
        </button>
      </form>

      <h2>Offer an alias to a wallet</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void prepare(() => prepareOffer(ctx, offer));
        }}
      >
        <TextFields
          value={offer}
          set={setOffer}
          fields={[
            { key: 'alias', label: 'Alias to offer' },
            { key: 'recipient', label: 'To wallet' },
            {
              key: 'fee',
              label: 'Fee the wallet pays you (SOL)',
              hint: 'Blank or 0: a gift.',
              mode: 'decimal',
            },
            { key: 'days', label: 'Open for (days)', mode: 'decimal' },
          ]}
        />
        <button type="submit" disabled={preparing}>
          Review offer
        </button>
      </form>

      <h2>Sell a domain</h2>
      <p class="hint">
        While a domain is listed, its authority is the listing: mail your server relays for it waits in
        senders' queues, so list it with an empty delivery queue and a short term.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void prepare(() => prepareListDomain(ctx, sellDomain));
        }}
      >
        <TextFields
          value={sellDomain}
          set={setSellDomain}
          fields={[
            { key: 'domain', label: 'Domain to sell (you are its authority)' },
            {
              key: 'price',
              label: 'Asking price for the domain (SOL)',
              hint: '0 only with a named buyer: a gift.',
              mode: 'decimal',
            },
            {
              key: 'buyer',
              label: 'Only this wallet may buy (optional)',
              hint: 'Blank: anyone. Named: an escrowed hand-off to that wallet.',
            },
            { key: 'days', label: `Listed for (days, at most ${DOMAIN_LISTING_MAX_DAYS})`, mode: 'decimal' },
          ]}
        />
        <button type="submit" disabled={preparing}>
          Review domain listing
        </button>
      </form>

      <h2>Buy a domain by name</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void prepare(() => prepareBuyDomain(ctx, { domain: buyDomain }));
        }}
      >
        <TextField label="Domain to buy" value={buyDomain} set={setBuyDomain} />
        <button type="submit" disabled={preparing}>
          Review purchase
        </button>
      </form>

      {sheet}
    </section>
  );
}
