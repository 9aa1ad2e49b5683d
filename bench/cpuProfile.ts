/**
 * A `.cpuprofile` (node --cpu-prof) summarised: the frames with the most self time, aggregated by function and
 * location, with their share of all samples (GC as the profile names it; idle time is given apart, not ranked).
 * `from`/`to`: only the samples that many seconds after the profile began (an idle window of a longer run).
 * Usage: npx tsx bench/cpuProfile.ts <file.cpuprofile | folder of them> [top=5] [from=0] [to=∞]
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per frame (function, file, line) in ms, most first; only samples between `from` and `to` s in. */
export function selfTimes(
  profile: Profile,
  from = 0,
  to = Number.POSITIVE_INFINITY,
): Array<{ frame: string; ms: number }> {
  const frameOf = new Map<number, string>();
  for (const { id, callFrame: f } of profile.nodes) {
    const where =
      f.url === ''
        ? ''
        : ` ${f.url.replace(/^file:\/\//, '').replace(/.*\/node_modules\//, '')}:${f.lineNumber + 1}`;
    frameOf.set(id, `${f.functionName || '(anonymous)'}${where}`);
  }
  const ms = new Map<string, number>();
  let at = 0;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (at < from * 1e6 || at > to * 1e6) return;
    const frame = frameOf.get(id)!;
    ms.set(frame, (ms.get(frame) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return [...ms].map(([frame, total]) => ({ frame, ms: total })).sort((a, b) => b.ms - a.ms);
}

/** The top `top` frames of the profile at `where` (a file, or the only/largest one in a folder), as text lines. */
export function summarizeProfile(where: string, top = 5, from = 0, to = Number.POSITIVE_INFINITY): string {
  const file = statSync(where).isDirectory()
    ? readdirSync(where)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => path.join(where, f))
        .sort((a, b) => statSync(b).size - statSync(a).size)[0]!
    : where;
  const times = selfTimes(JSON.parse(readFileSync(file, 'utf8')) as Profile, from, to);
  const total = times.reduce((sum, t) => sum + t.ms, 0);
  const idle = times.find((t) => t.frame === '(idle)')?.ms ?? 0;
  const lines = times
    .filter((t) => t.frame !== '(idle)')
    .slice(0, top)
    .map(
      (t) =>
        `    ${t.ms.toFixed(0).padStart(7)} ms ${((t.ms / total) * 100).toFixed(1).padStart(5)} %  ${t.frame}`,
    );
  return [
    `  top ${top} frames by self time of ${(total / 1000).toFixed(1)} s sampled, ${(idle / 1000).toFixed(1)} s of it idle (${path.basename(file)}):`,
    ...lines,
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`)
  console.log(
    summarizeProfile(
      process.argv[2]!,
      Number(process.argv[3] ?? '5'),
      Number(process.argv[4] ?? '0'),
      Number(process.argv[5] ?? 'Infinity'),
    ),
  );
