// axe-core in the page under test: `axeViolations` injects axe (once per
// document) and returns the WCAG 2.x A/AA violations of what is on screen,
// each as "rule: target, …" for a readable failure.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
let source = '';

export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) {
    // Evaluated through the debugger protocol: the page's CSP allows no inline script tag.
    source ||= readFileSync(AXE, 'utf8');
    await page.evaluate(source);
  }
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (ctx: Document, opts: unknown) => Promise<unknown>;
          getRules: (tags: string[]) => { ruleId: string }[];
        };
      }
    ).axe;
    // axe's experimental rules stay off, as in its default run.
    const rules = Object.fromEntries(
      axe.getRules(['experimental']).map((r) => [r.ruleId, { enabled: false }]),
    );
    const out = (await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
      rules,
    })) as { violations: { id: string; nodes: { target: unknown[] }[] }[] };
    return out.violations.map((v) => `${v.id}: ${v.nodes.map((n) => String(n.target)).join(', ')}`);
  });
}
