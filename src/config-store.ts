// Writing the config file, through conf (atomic writes, the folder created as
// needed), one writer at a time (proper-lockfile): conf reads, changes and writes the
// whole file, so two `config set` at once would otherwise lose one of the changes.
// Loaded only by `config set` / `config unset`: conf brings a JSON schema validator
// along, which nothing else needs. The file is exactly configFile(), the one the run
// path reads with readConfigFile.
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import Conf from 'conf';
import { lock } from 'proper-lockfile';
import { BrokenConfigFile, configDir, configFile, readConfigObject, refuseUnreadFolder } from './config.js';
import { orPointXdgElsewhere } from './config-path.js';
import { CliError } from './errors.js';
import { sleep } from './sleep.js';

/**
 * A lock left by a writer that was killed is taken over once it is `stale` ms old (the
 * least proper-lockfile allows; a live writer refreshes it every second). A writer
 * waits for another that long and a little more, trying every 25 ms: a write takes milliseconds.
 * Between taking the lock and releasing it nothing waits on a timer or on I/O (the file is
 * read and written synchronously), so the refresh never runs then and never finds the lock
 * taken over: proper-lockfile's onCompromised, which throws, cannot fire while we hold it.
 */
const LOCK = { retries: 0, stale: 2000, realpath: false } as const;
const WAIT_MS = LOCK.stale + 1000;

export type ConfigFile = Conf<Record<string, unknown>>;

/**
 * Runs `change` on the config file, holding its lock. Its keys are not checked here:
 * `unset` must be able to remove a bad one. A file that is not a JSON object (conf
 * would quietly replace it) is first renamed to `config.json.broken-<time>`, so that
 * nothing in it is lost; `setAside` names that file and says why.
 */
export async function changeConfigFile<T>(change: (file: ConfigFile) => T): Promise<{ result: T; path: string; setAside?: string }> {
  const path = configFile();
  const release = await writing(path, async () => {
    // Private whatever the umask: the file names the program every turn runs (`agent`).
    mkdirSync(configDir(), { recursive: true, mode: 0o700 });
    return locked(path);
  });
  try {
    return await writing(path, () => {
      let setAside: string | undefined;
      let broken: BrokenConfigFile | undefined;
      try {
        readConfigObject(path);
      } catch (error) {
        if (!(error instanceof BrokenConfigFile)) throw error;
        broken = error;
      }
      // A file there is not read (one that is would have been refused above): none is started, nothing is set aside.
      refuseUnreadFolder(path);
      if (broken !== undefined) {
        const kept = `${path}.broken-${new Date().toISOString().replace(/[:.]/g, '-')}`;
        renameSync(path, kept);
        setAside = `the config file ${path} ${broken.problem}: it was kept as ${kept}`;
      }
      const file: ConfigFile = new Conf({
        cwd: configDir(),
        configName: 'config',
        fileExtension: 'json',
        // Setting names have no dots; a dotted key must never become a nested object.
        accessPropertiesByDotNotation: false,
        // conf's default is 0666 less the umask: under a umask of 000 anyone could name our agent.
        configFileMode: 0o600,
      });
      // One file, one truth: if conf ever resolved another path, runs would not see what we wrote.
      if (file.path !== path) throw new Error(`conf writes ${file.path}, but runs read ${path}`);
      const result = change(file);
      // conf writes only what changed: a new file was started only if there is one now.
      if (setAside !== undefined && existsSync(path)) setAside += ', and a new one started';
      return setAside === undefined ? { result, path } : { result, path, setAside };
    });
  } finally {
    await release().catch(() => undefined);
  }
}

/**
 * The file's lock, waiting WAIT_MS at most for another writer. Only a held lock is
 * waited for (proper-lockfile's own retries would retry a folder we may not write, too).
 */
async function locked(path: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      return await lock(path, LOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED' || Date.now() >= deadline) throw error;
      await sleep(25);
    }
  }
}

/** `step`, with what the file system refuses said as what it means for the user. */
async function writing<T>(path: string, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOCKED')
      throw new CliError(
        `another cursor-resume has been changing ${path} for over ${WAIT_MS / 1000} seconds and holds its lock (${path}.lock); try again, and if no other cursor-resume is running, remove that lock`,
      );
    if (error instanceof RangeError)
      throw new CliError(
        `cannot write the config file ${path}: it nests too deeply to be written back (${error.message}). Nothing was changed; remove its deepest value`,
      );
    // Any refusal of the file system (ENAMETOOLONG, ELOOP, a lock folder someone filled: ENOTEMPTY...).
    if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code))
      throw new CliError(
        `cannot write the config file ${path}: ${(error as Error).message}. Nothing was changed; check that you can create and write ${configDir()}${orPointXdgElsewhere()}`,
      );
    throw error;
  }
}
