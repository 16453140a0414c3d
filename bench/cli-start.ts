// `npm run bench:cli`: how fast `sealpost` starts and finishes for commands
// that do little (--help, --version, config check), from dist/ and, with
// --before, through tsx as every start went before dist/.
//
//   npm run bench:cli -- [--runs N] [--no-before]
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { measureCliStart } from './harness/cli-start.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    'no-before': { type: 'boolean', default: false },
  },
});
const result = measureCliStart({ runs: Number(values.runs), before: values['no-before'] !== true });
const lines = [
  `sealpost start-up, ${cpus().length} cores, Node ${process.version}, timed with ${result.tool}`,
  '',
  `${'command'.padEnd(40)} ${'runs from'.padEnd(10)} ${'runs'.padStart(4)} ${'median'.padStart(9)} ${'p90'.padStart(9)} ${'min'.padStart(9)}`,
  ...result.rows.map(
    (r) =>
      `${r.command.padEnd(40)} ${r.mode.padEnd(10)} ${String(r.runs).padStart(4)} ${`${r.medianMs.toFixed(0)} ms`.padStart(9)} ${`${r.p90Ms.toFixed(0)} ms`.padStart(9)} ${`${r.minMs.toFixed(0)} ms`.padStart(9)}`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
