// Whether a process is still running, for a helper's pid: a helper runs detached, so its
// parent may be an init that never reaps it (a container's), and on Linux a zombie, which
// signal 0 still finds, has exited. One of another user's is not ours (its pid was reused).
import fs from 'node:fs';

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH' || code === 'EPERM') return false;
    throw error;
  }
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return true; // no /proc (macOS, whose launchd reaps), or it went meanwhile: signal 0 says next time
  }
  // "pid (comm) state ...": comm may hold spaces and parentheses.
  const state = stat.charAt(stat.lastIndexOf(')') + 2);
  return state !== 'Z' && state !== 'X';
}
