import { formatResultLine, writeResult } from './lib.js';
import { scenarios } from './scenarios/index.js';

const requested = process.argv.slice(2).filter((argument) => !argument.startsWith('-'));
const selected = requested.length === 0 ? scenarios : scenarios.filter((scenario) => requested.includes(scenario.name));
const unknown = requested.filter((name) => !scenarios.some((scenario) => scenario.name === name));
if (unknown.length > 0) {
  console.error(`unknown scenario(s): ${unknown.join(', ')}; known: ${scenarios.map((scenario) => scenario.name).join(', ') || 'none yet'}`);
  process.exit(1);
}
if (selected.length === 0) {
  console.error('no benchmark scenarios are defined yet');
  process.exit(1);
}
let failed = false;
for (const scenario of selected) {
  console.log(`# ${scenario.name}: ${scenario.description}`);
  try {
    const result = await scenario.run();
    writeResult(result);
    console.log(formatResultLine(result));
  } catch (error) {
    failed = true;
    console.error(`${scenario.name}: failed: ${(error as Error).stack ?? String(error)}`);
  }
}
process.exit(failed ? 1 : 0);
