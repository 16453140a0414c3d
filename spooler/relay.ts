// Delivery through the configured relay (smarthost): its addresses in
// turn, TLS as `[spooler.relay] tls` says with a WebPKI check of its name,
// AUTH when configured. MTA-STS, DANE and TLS-RPT do not apply.
import { isIP } from 'node:net';
import {
  type AttemptDeps,
  type AttemptInput,
  type AttemptOutcome,
  deferAll,
  keepAfter,
  overCachedSession,
  type Reason,
  sessionBase,
  toOutcome,
} from './attempt-common.ts';
import { resolveAddresses } from './routing.ts';
import { SmtpSession, type TlsMode } from './smtp-session.ts';
import { webPkiResultType } from './tls-policy.ts';

export async function viaRelay(deps: AttemptDeps, input: AttemptInput): Promise<AttemptOutcome> {
  const relay = deps.config.relay;
  if (!relay) throw new Error('no relay configured');
  let addresses: string[];
  if (isIP(relay.host)) addresses = [relay.host];
  else {
    try {
      addresses = (await resolveAddresses(deps.dns, relay.host)).addresses;
    } catch (err) {
      return deferAll(input.rcpts, {
        status: '4.4.3',
        diagnostic: `relay ${relay.host}: ${(err as Error).message}`,
      });
    }
  }
  const verifyPki = relay.tls !== 'opportunistic';
  const mode: TlsMode =
    relay.tls === 'implicit' ? 'implicit' : relay.tls === 'starttls' ? 'required' : 'opportunistic';
  let last: Reason = { status: '4.4.1', diagnostic: `relay ${relay.host} has no address` };
  for (const address of addresses) {
    const key = `relay|${address}|${relay.port}|${relay.host}|${mode}`;
    const reused = await overCachedSession(deps, input, key);
    if (reused) return toOutcome(reused, relay.host);
    const opened = await SmtpSession.open({
      ...sessionBase(deps, address, relay.host),
      port: relay.port,
      tls: mode,
      auth: relay.username ? { user: relay.username, pass: deps.relayPassword ?? '' } : undefined,
      // MTA-STS and DANE never apply to a relay; its certificate must be valid for its name.
      verify: (tls) =>
        verifyPki && !tls.authorized
          ? {
              resultType: webPkiResultType(tls.authorizationError),
              reason: `relay certificate: ${tls.authorizationError}`,
            }
          : null,
    });
    if (opened instanceof SmtpSession)
      return toOutcome(await keepAfter(deps, key, opened, input), relay.host);
    last = {
      status: opened.policyFailure ? '4.7.5' : '4.4.1',
      diagnostic: `relay ${relay.host} [${address}]: ${opened.reason}`,
      remoteMta: relay.host,
    };
  }
  return deferAll(input.rcpts, last);
}
