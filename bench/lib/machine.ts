// What Linux says about the machine and a process (/proc): CPU time by thread, the CPU time the
// hypervisor gave to others (steal), peak memory. Figures read as 0 or empty where unreadable.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { median } from './stats.ts';

/** µs of CPU per response: the main thread, the busiest other thread (our recorder), all the rest. */
export interface ProcessCpu {
  main: number;
  busiestOther: number;
  rest: number;
}

export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** The machine's CPU time so far, in clock ticks: all of it, and what the hypervisor took for others (steal); from /proc/stat. */
export function machineCpuTicks(): { total: number; steal: number } {
  try {
    // "cpu  user nice system idle iowait irq softirq steal guest guest_nice": guest time is counted in user already.
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    return { total: fields.reduce((sum, n) => sum + n, 0), steal: fields[7] ?? 0 };
  } catch {
    return { total: 0, steal: 0 };
  }
}

/** Share of the machine's CPU time between two readings that the hypervisor gave to others (0 when unknown). */
export function stealPercent(before: { total: number; steal: number }, after: { total: number; steal: number }): number {
  const total = after.total - before.total;
  return total > 0 ? (100 * (after.steal - before.steal)) / total : 0;
}

function clockTicksPerSecond(): number {
  return Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;
}

/** CPU time (user + system, µs) of each thread of a process, from /proc; empty when unreadable. */
export function threadCpuUs(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  const ticks = clockTicksPerSecond();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // Fields after the parenthesised command name: state is the 3rd field, utime the 14th, stime the 15th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.set(Number(tid), ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticks);
    }
  } catch {
    // the process is gone, or this is not Linux
  }
  return threads;
}

export function cpuPerResponse(pid: number, before: Map<number, number>, after: Map<number, number>, responses: number): ProcessCpu | undefined {
  if (after.size === 0 || responses === 0) return undefined;
  const spent = [...after].map(([tid, us]) => [tid, us - (before.get(tid) ?? 0)] as const);
  const main = spent.find(([tid]) => tid === pid)?.[1] ?? 0;
  const others = spent
    .filter(([tid]) => tid !== pid)
    .map(([, us]) => us)
    .sort((a, b) => b - a);
  const rest = others.slice(1).reduce((sum, us) => sum + us, 0);
  return { main: main / responses, busiestOther: (others[0] ?? 0) / responses, rest: rest / responses };
}

/** Each part's median over several runs. */
export function medianCpu(cpus: ProcessCpu[]): ProcessCpu {
  return { main: median(cpus.map((c) => c.main)), busiestOther: median(cpus.map((c) => c.busiestOther)), rest: median(cpus.map((c) => c.rest)) };
}

export function describeCpu(cpu: ProcessCpu): string {
  const total = cpu.main + cpu.busiestOther + cpu.rest;
  return `CPU ${Math.round(total)} µs/response (main thread ${Math.round(cpu.main)}, busiest other ${Math.round(cpu.busiestOther)}, rest ${Math.round(cpu.rest)})`;
}

export function peakRssMiB(pid: number): number {
  try {
    const kib = Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return Math.round(kib / 1024);
  } catch {
    return NaN;
  }
}
