import { readdirSync, readFileSync } from 'node:fs';
import { helperThreadNice } from '../../src/platform/threads.js';

/**
 * How many of this process's threads run at the helper threads' nice value (Linux: field 19 of
 * `/proc/self/task/<tid>/stat`; the thread's name before it may hold spaces).
 */
export function nicedThreads(): number {
  const niceOf = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ')[16]);
  return readdirSync('/proc/self/task').map(niceOf).filter((nice) => nice === helperThreadNice).length;
}
