// Preloaded into a command whose cost a bench measures (`node --import …/process-usage.mjs bin/anchorage …`):
// as the process exits, it writes its peak resident set and CPU time (getrusage) to the file USAGE_FILE names.
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

// Preloads run in worker threads too; only the process's own exit reports.
if (isMainThread) {
  const file = process.env.USAGE_FILE;
  process.on('exit', () => {
    const { maxRSS, userCPUTime, systemCPUTime } = process.resourceUsage();
    writeFileSync(file, JSON.stringify({ maxRssKb: maxRSS, cpuMicros: userCPUTime + systemCPUTime }));
  });
}
