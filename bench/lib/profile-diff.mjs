// Self time per function of two CPU profiles (`.cpuprofile`, e.g. from bench/security-write.profile.ts
// with PROFILE_OUT), in µs per call, side by side, the largest differences first.
//   node bench/lib/profile-diff.mjs a.cpuprofile b.cpuprofile [calls=3000] [rows=40]
import { readFileSync } from 'node:fs';

const [fileA, fileB, callsArg = '3000', rowsArg = '40'] = process.argv.slice(2);
const calls = Number(callsArg);
function selfTimes(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const times = new Map();
  const deltas = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const node = byId.get(profile.samples[i]);
    const f = node.callFrame;
    const name = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${f.lineNumber + 1}`;
    times.set(name, (times.get(name) ?? 0) + (deltas[i] ?? 0));
  }
  return times;
}
const a = selfTimes(fileA);
const b = selfTimes(fileB);
const total = (m) => [...m.values()].reduce((x, y) => x + y, 0) / calls;
console.log(`total µs/call: ${total(a).toFixed(1)} → ${total(b).toFixed(1)}`);
const names = new Set([...a.keys(), ...b.keys()]);
const rows = [...names].map((n) => [n, (a.get(n) ?? 0) / calls, (b.get(n) ?? 0) / calls]).sort((x, y) => Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]));
for (const [n, x, y] of rows.slice(0, Number(rowsArg))) console.log(`${(y - x).toFixed(2).padStart(7)}  ${x.toFixed(2).padStart(7)} ${y.toFixed(2).padStart(7)}  ${n}`);
