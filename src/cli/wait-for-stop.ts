// How a long-running command learns it should stop: SIGINT or SIGTERM, or,
// when a parent started it with an IPC channel (`sealpost dev` does), the
// channel closing because the parent is gone. Later signals are ignored
// (not fatal) while the command shuts down, so a second Ctrl-C or a
// supervisor's repeated SIGTERM never cuts a graceful stop short.
import cluster from 'node:cluster';

export type StopReason = 'SIGINT' | 'SIGTERM' | 'parent gone';

export function waitForStop(): Promise<StopReason> {
  return new Promise((resolve) => {
    let stopped = false;
    const stop = (reason: StopReason) => {
      if (stopped) return;
      stopped = true;
      resolve(reason);
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    // A cluster worker's channel is the cluster's own (Node exits the worker when the primary goes).
    if (process.channel && !cluster.isWorker) {
      process.once('disconnect', () => stop('parent gone'));
      // The channel must not keep the process alive by itself, nor be what ends it.
      process.channel.unref();
    }
  });
}
