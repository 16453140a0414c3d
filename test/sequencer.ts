// The order vitest starts test files in. The suite runs a few files at once;
// a long file started last keeps the run going alone long after the others
// are done. So the files known to take longest (each starts a dev stack,
// Chromium, several child processes) start first, longest first, and the
// short ones fill the gaps. The weights are rough wall-clock seconds from a
// full run on a busy 2-core machine (only their order matters); the program
// tests that build many worlds left the list once later worlds stopped
// deploying the program again; a file not listed counts as short. Vitest's
// own results cache (longest first, failed first) is not relied on: a fresh
// checkout in CI has none.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SECONDS: Record<string, number> = {
  // Not measured in that run (it failed to load); its 14 browser tests are the longest webmail file.
  'test/e2e/webmail-e2e.test.ts': 200,
  'test/e2e/serve-cluster.test.ts': 209,
  'test/program/program-deploy.test.ts': 208,
  'test/submission/submission-mail.test.ts': 203,
  'test/submission/submission-auth.test.ts': 163,
  'test/cli/cli-account-password.test.ts': 159,
  'test/cli/cli-mailbox-holder.test.ts': 144,
  'test/api/api-cross-process.test.ts': 132,
  'test/cli/cli-queue.test.ts': 125,
  'test/cli/cli-admin-account.test.ts': 111,
  'test/cli/cli-sign-text.test.ts': 109,
  'test/e2e/inbound-crash-drill.test.ts': 109,
  'test/api/api-account.test.ts': 99,
  // Added after that run: measured while five other webmail files ran beside it.
  'test/webmail/webmail-held-draft.test.ts': 100,
  'test/program/program-checks.test.ts': 90,
  'test/cli/cli-dist.test.ts': 92,
  'test/submission/submission-submit.test.ts': 92,
  'test/webmail/webmail-market.test.ts': 91,
  'test/cli/cli-mailbox-read-noipfs.test.ts': 87,
  'test/cli/cli-market-domain.test.ts': 86,
  'test/cli/cli-timelock.test.ts': 84,
  'test/e2e/inbound-e2e.test.ts': 84,
  'test/domaind/domaind-onboarding.test.ts': 82,
  'test/mail-access/imap-bad-input.test.ts': 82,
  'test/program/program-deploy-refusals.test.ts': 82,
  'test/e2e/dev-stack.test.ts': 81,
  'test/cli/cli-attest.test.ts': 76,
  'test/seal/seal-cli.test.ts': 75,
  'test/cli/cli-market.test.ts': 73,
  'test/delivery/cost-guard-mx.test.ts': 71,
  'test/chain/chain-sendmail-rpc.test.ts': 70,
  'test/cli/cli-keygen.test.ts': 66,
  'test/cli/cli-beacon.test.ts': 64,
  'test/api/api-pin-provider.test.ts': 59,
  'test/domaind/domaind-reclaim.test.ts': 54,
  'test/webmail/webmail-server-mode.test.ts': 53,
  'test/cli/cli-admin-token.test.ts': 52,
  'test/mail-access/pop3-dele.test.ts': 52,
  'test/mx/mx-group-commit.test.ts': 51,
  'test/ops/dev-children.test.ts': 50,
  'test/mx/mx-edge.test.ts': 47,
  'test/chain/chain-accounts-rpc.test.ts': 45,
  'test/program/program-cu.test.ts': 45,
  'test/webmail/webmail-inbox.test.ts': 42,
  'test/submission/submission-dsn.test.ts': 41,
  'test/submission/submission-sent-copy.test.ts': 41,
  'test/core/metrics-endpoint.test.ts': 40,
};

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const weight = (f: TestSpecification) => SECONDS[relative(root, f.moduleId).replaceAll('\\', '/')] ?? 0;
    // BaseSequencer's order (its cache when present) breaks ties among equal weights.
    const base = await super.sort(files);
    const rank = new Map(base.map((f, i) => [f, i]));
    return [...base].sort((a, b) => weight(b) - weight(a) || (rank.get(a) ?? 0) - (rank.get(b) ?? 0));
  }
}
