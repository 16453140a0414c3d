// One delivery attempt of one message to the recipients at one domain:
// route (relay, or MX hosts in order), the TLS policy of each host, one SMTP
// session per address until a transaction happens, TLS-RPT rows for every
// TLS session. The result says per recipient: delivered (already recorded
// through `onDelivered`), failed for good, or deferred, with the reason.
import {
  type AttemptDeps,
  type AttemptInput,
  type AttemptOutcome,
  deferAll,
  failAll,
  keepAfter,
  overCachedSession,
  type Reason,
  sessionBase,
  toOutcome,
} from './attempt-common.ts';
import type { StsLookup } from './mta-sts.ts';
import { viaRelay } from './relay.ts';
import { type MxHost, resolveAddresses, resolveRoute } from './routing.ts';
import { type PolicyFailure, SmtpSession, type TlsInfo, type TlsMode } from './smtp-session.ts';
import { decideHostPolicy, type HostPolicy, judgeTls, type ReportPolicy, tlsModeOf } from './tls-policy.ts';
import { isResultType } from './tlsrpt-store.ts';

export type { AttemptDeps, AttemptInput, AttemptOutcome, Reason } from './attempt-common.ts';

export async function attemptDelivery(deps: AttemptDeps, input: AttemptInput): Promise<AttemptOutcome> {
  const { config } = deps;
  if (config.relay) return viaRelay(deps, input);

  let route: Awaited<ReturnType<typeof resolveRoute>>;
  try {
    route = await resolveRoute(deps.dns, input.domain, deps.random);
  } catch (err) {
    return deferAll(input.rcpts, {
      status: '4.4.3',
      diagnostic: `MX lookup of ${input.domain} failed: ${(err as Error).message}`,
    });
  }
  if (route.kind === 'null-mx') {
    return failAll(input.rcpts, {
      status: '5.1.10',
      diagnostic: `${input.domain} accepts no mail (null MX, RFC 7505)`,
    });
  }
  if (route.kind === 'no-domain') {
    return failAll(input.rcpts, { status: '5.1.2', diagnostic: `domain ${input.domain} does not exist` });
  }

  const sts: StsLookup =
    config.mta_sts && deps.mtaSts ? await deps.mtaSts.lookup(input.domain) : { policy: null };
  if (sts.failure) {
    const policy: ReportPolicy = {
      policyType: 'sts',
      policyString: sts.policy?.policy.lines ?? [],
      mxHost: sts.policy?.policy.mx ?? [],
    };
    report(deps, input.domain, policy, { resultType: sts.failure.type, reason: sts.failure.reason }, {});
  }

  let last: Reason = { status: '4.4.1', diagnostic: `no MX host of ${input.domain} could be reached` };
  for (const mx of route.hosts) {
    let addresses: { addresses: string[]; secure: boolean };
    try {
      addresses = await resolveAddresses(deps.dns, mx.host);
    } catch (err) {
      last = {
        status: '4.4.3',
        diagnostic: `address lookup of ${mx.host} failed: ${(err as Error).message}`,
        remoteMta: mx.host,
      };
      continue;
    }
    if (addresses.addresses.length === 0) {
      if (mx.implicit) {
        return failAll(input.rcpts, {
          status: '5.1.2',
          diagnostic: `${input.domain} has neither MX nor address records`,
        });
      }
      last = { status: '4.4.4', diagnostic: `MX host ${mx.host} has no address`, remoteMta: mx.host };
      continue;
    }
    const policy = await decideHostPolicy({
      dns: deps.dns,
      host: mx.host,
      port: config.smtp_port,
      daneInEffect: deps.daneInEffect(),
      mxSecure: route.secure,
      addressesSecure: addresses.secure,
      sts: sts.policy,
    });
    if (policy.kind === 'skip') {
      report(deps, input.domain, policy.report, policy.failure, { receivingMxHostname: mx.host });
      last = { status: '4.7.5', diagnostic: `${mx.host}: ${policy.failure.reason}`, remoteMta: mx.host };
      continue;
    }
    for (const address of addresses.addresses) {
      const r = await sessionUnderPolicy(deps, input, mx, address, policy);
      if (r.kind === 'transaction') return r.outcome;
      last = r.reason;
    }
  }
  return deferAll(input.rcpts, last);
}

type HostResult = { kind: 'transaction'; outcome: AttemptOutcome } | { kind: 'next'; reason: Reason };
/** What a cached session must match to be reused: place, TLS mode and the policy it was verified under. */
function policyKey(p: HostPolicy): string {
  switch (p.kind) {
    case 'dane':
    case 'dane-encrypt':
      return `${p.kind}:${p.records.map((r) => `${r.usage}${r.selector}${r.matchingType}${r.data.toString('hex')}`).join(',')}`;
    case 'sts-enforce':
    case 'sts-testing':
      return `${p.kind}:${p.policy.id}:${p.policy.fetchedAt}`;
    default:
      return p.kind;
  }
}

async function sessionUnderPolicy(
  deps: AttemptDeps,
  input: AttemptInput,
  mx: MxHost,
  address: string,
  policy: Exclude<HostPolicy, { kind: 'skip' }>,
): Promise<HostResult> {
  let mode: TlsMode = tlsModeOf(policy);
  const keyOf = (m: TlsMode) => `${address}|${deps.config.smtp_port}|${mx.host}|${m}|${policyKey(policy)}`;
  for (const m of mode === 'opportunistic' ? (['opportunistic', 'none'] as const) : [mode]) {
    const reused = await overCachedSession(deps, input, keyOf(m));
    if (reused) return { kind: 'transaction', outcome: toOutcome(reused, mx.host) };
  }
  for (;;) {
    let observed: PolicyFailure | null = null;
    let tlsSeen: TlsInfo | undefined;
    const opened = await SmtpSession.open({
      ...sessionBase(deps, address, mx.host),
      port: deps.config.smtp_port,
      tls: mode,
      verify: (tls) => {
        tlsSeen = tls;
        const j = judgeTls(policy, tls, mx.host, deps.now());
        observed = j.failure;
        return j.enforced ? j.failure : null;
      },
    });
    const session = opened instanceof SmtpSession ? opened : null;
    const refused = opened instanceof SmtpSession ? null : opened;
    const failure: PolicyFailure | null = refused?.policyFailure ?? observed;
    const tls = tlsSeen ?? refused?.tls;
    // A session that got as far as TLS (or its refusal) counts for TLS-RPT; a reused one does not count again.
    if (failure || tls) {
      report(deps, input.domain, policy.report, failure, {
        receivingMxHostname: mx.host,
        receivingIp: address,
        sendingMtaIp: tls?.localAddress,
      });
    }
    if (session) {
      const result = await keepAfter(deps, keyOf(mode), session, input);
      return { kind: 'transaction', outcome: toOutcome(result, mx.host) };
    }
    if (!refused) throw new Error('unreachable');
    // RFC 7435: a STARTTLS handshake that fails under opportunistic TLS is retried in clear text.
    if (mode === 'opportunistic' && refused.handshakeFailed) {
      mode = 'none';
      continue;
    }
    const status = refused.policyFailure
      ? refused.policyFailure.resultType === 'starttls-not-supported'
        ? '4.7.10'
        : '4.7.5'
      : '4.4.1';
    return {
      kind: 'next',
      reason: { status, diagnostic: `${mx.host} [${address}]: ${refused.reason}`, remoteMta: mx.host },
    };
  }
}

function report(
  deps: AttemptDeps,
  domain: string,
  policy: ReportPolicy,
  failure: PolicyFailure | null,
  where: { receivingMxHostname?: string; receivingIp?: string; sendingMtaIp?: string },
): void {
  if (!deps.tlsrpt) return;
  const result =
    failure && isResultType(failure.resultType)
      ? failure.resultType
      : failure
        ? 'validation-failure'
        : 'success';
  deps.tlsrpt.record({
    policyDomain: domain,
    ...policy,
    result,
    ...where,
    ...(failure ? { failureReasonCode: failure.reason.slice(0, 200) } : {}),
  });
}
