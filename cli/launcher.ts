// The launcher going away. Started through npx, `npm exec`, an npm script or `sh -c`, the
// command runs under a process that may die from the SIGTERM meant for it (CI's `kill $!`,
// a job's timeout): npm and sh exit at once, the signal never reaches the command, and it is
// orphaned (reparented to init or a subreaper). Watching the parent's pid notices that, so a
// long-running command can stop as it would on SIGTERM instead of running on unseen.
/** How often the parent's pid is read: cheap (one system call), and a stop follows within this. */
export const LAUNCHER_POLL_MS = 250;

export interface LauncherWatch {
  /** Resolves with the launcher's pid once this process has been handed to another parent. */
  gone: Promise<number>;
  dispose(): void;
}

export function watchLauncher(pollMs = LAUNCHER_POLL_MS): LauncherWatch {
  const launcher = process.ppid;
  let timer: NodeJS.Timeout | undefined;
  const gone = new Promise<number>((resolve) => {
    // Parent 0 or 1: started by init itself (a container's entrypoint), so signals reach us directly.
    if (launcher <= 1) return;
    timer = setInterval(() => {
      if (process.ppid === launcher) return;
      clearInterval(timer);
      resolve(launcher);
    }, pollMs);
    // Never what keeps the process alive.
    timer.unref();
  });
  return { gone, dispose: () => clearInterval(timer) };
}
