// Deterministic, realistic-looking content for the benchmark conversations: an
// OpenCode-like system prompt, a dozen tool definitions with full JSON schemas, and
// source files, test logs and grep output for tool results. A seeded generator, so
// every run sends exactly the same bytes.

/** Mulberry32: tiny, fast, good enough to vary sizes and pick words. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(random: () => number, items: ReadonlyArray<T>): T => items[Math.floor(random() * items.length)]!;

const GUIDELINES = [
  'Read the relevant files before you change them, and keep each change as small as the task allows.',
  'Prefer the project’s existing patterns, helpers and naming over new abstractions.',
  'Never invent APIs: when unsure how a function behaves, read its source or its tests.',
  'Run the narrowest test command that covers your change, then the whole suite before you finish.',
  'Explain what you changed and why in two or three sentences; do not paste whole files back.',
  'When a command fails, read the error output carefully and fix the cause, not the symptom.',
  'Keep secrets out of logs, commits and tool arguments; never print environment variables.',
  'Ask one clear question when a requirement is ambiguous instead of guessing silently.',
  'Use the todo tools to plan multi-step work and mark items done as you finish them.',
  'Format code with the project’s formatter; do not reformat lines you did not touch.',
  'Treat generated files and lockfiles as read-only unless the task is about them.',
  'When editing, include enough surrounding context in oldString for the match to be unique.',
  'Prefer absolute paths in tool calls; the working directory may differ from the project root.',
  'Batch independent read-only tool calls in one response to save round trips.',
  'Stop and report when a tool keeps failing; do not loop on the same failing call.',
];

/** An OpenCode-like system prompt of about `bytes` bytes (several KB). */
export function systemPrompt(bytes = 6500): string {
  const random = rng(7);
  const parts = [
    'You are opencode, an interactive CLI coding agent. You help users with software engineering tasks in the repository they opened.',
    '',
    '# Tone and style',
    'Be concise and direct. Use GitHub-flavoured Markdown. Only use emojis when asked.',
    '',
    '# Working on code',
  ];
  let text = parts.join('\n');
  let section = 0;
  const sections = ['# Tool usage policy', '# Testing', '# Git', '# Safety', '# Environment'];
  while (Buffer.byteLength(text) < bytes) {
    text += `\n- ${pick(random, GUIDELINES)}`;
    if (random() < 0.12 && section < sections.length) text += `\n\n${sections[section++]}`;
  }
  return `${text}\n\n<env>\n  Platform: linux\n  Today's date: 2026-12-02\n  Is directory a git repo: yes\n</env>`;
}

interface JsonSchema {
  type: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  required?: string[];
  enum?: string[];
  additionalProperties?: boolean;
}

const str = (description: string): JsonSchema => ({ type: 'string', description });
const num = (description: string): JsonSchema => ({ type: 'number', description });
const bool = (description: string): JsonSchema => ({ type: 'boolean', description });
const obj = (properties: Record<string, JsonSchema>, required: string[]): JsonSchema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

function longDescription(lead: string, seed: number, bytes: number): string {
  const random = rng(seed);
  let text = lead;
  while (Buffer.byteLength(text) < bytes) text += `\n- ${pick(random, GUIDELINES)}`;
  return text;
}

/** Twelve OpenAI-style tool definitions, as OpenCode sends them (long descriptions, full schemas). */
export function toolDefinitions(): Array<{ type: 'function'; function: { name: string; description: string; parameters: JsonSchema } }> {
  const tools: Array<[string, string, JsonSchema]> = [
    [
      'bash',
      longDescription('Executes a bash command in a persistent shell session with an optional timeout.', 1, 2400),
      obj(
        {
          command: str('The command to execute'),
          timeout: num('Optional timeout in milliseconds (max 600000)'),
          description: str('5-10 word description of what the command does'),
        },
        ['command', 'description'],
      ),
    ],
    [
      'read',
      longDescription('Reads a file from the local filesystem. Lines are numbered; long lines are truncated.', 2, 900),
      obj(
        {
          filePath: str('The absolute path to the file to read'),
          offset: num('The line number to start reading from (0-based)'),
          limit: num('The number of lines to read (defaults to 2000)'),
        },
        ['filePath'],
      ),
    ],
    [
      'write',
      longDescription('Writes a file to the local filesystem, overwriting any existing file.', 3, 700),
      obj({ filePath: str('The absolute path to the file to write'), content: str('The content to write to the file') }, [
        'filePath',
        'content',
      ]),
    ],
    [
      'edit',
      longDescription('Performs exact string replacements in files. The edit fails if oldString is not unique.', 4, 1400),
      obj(
        {
          filePath: str('The absolute path to the file to modify'),
          oldString: str('The text to replace'),
          newString: str('The text to replace it with'),
          replaceAll: bool('Replace all occurrences of oldString'),
        },
        ['filePath', 'oldString', 'newString'],
      ),
    ],
    [
      'glob',
      longDescription('Fast file pattern matching that works with any codebase size.', 5, 600),
      obj({ pattern: str('The glob pattern to match files against'), path: str('The directory to search in') }, ['pattern']),
    ],
    [
      'grep',
      longDescription('Fast content search using regular expressions; returns matching file paths and lines.', 6, 800),
      obj(
        {
          pattern: str('The regex pattern to search for in file contents'),
          path: str('The directory to search in'),
          include: str('File pattern to include in the search (e.g. "*.ts")'),
        },
        ['pattern'],
      ),
    ],
    [
      'list',
      longDescription('Lists files and directories in a given path, ignoring common build folders.', 7, 400),
      obj(
        {
          path: str('The absolute path to the directory to list'),
          ignore: { type: 'array', description: 'Glob patterns to ignore', items: str('A glob pattern') },
        },
        [],
      ),
    ],
    [
      'webfetch',
      longDescription('Fetches content from a URL and returns it as markdown, text or html.', 8, 700),
      obj(
        {
          url: str('The URL to fetch content from'),
          format: { type: 'string', description: 'The format to return the content in', enum: ['text', 'markdown', 'html'] },
          timeout: num('Optional timeout in seconds (max 120)'),
        },
        ['url', 'format'],
      ),
    ],
    [
      'todowrite',
      longDescription('Creates and manages a structured task list for the current coding session.', 9, 1800),
      obj(
        {
          todos: {
            type: 'array',
            description: 'The updated todo list',
            items: obj(
              {
                content: str('Brief description of the task'),
                status: { type: 'string', description: 'Current status', enum: ['pending', 'in_progress', 'completed', 'cancelled'] },
                priority: { type: 'string', description: 'Priority level', enum: ['high', 'medium', 'low'] },
                id: str('Unique identifier for the todo item'),
              },
              ['content', 'status', 'priority', 'id'],
            ),
          },
        },
        ['todos'],
      ),
    ],
    ['todoread', 'Reads the current todo list for the session.', obj({}, [])],
    [
      'task',
      longDescription(
        'Launches a new agent to handle a complex, multi-step task autonomously. Available agent types: general, explore.',
        10,
        1600,
      ),
      obj(
        {
          description: str('A short (3-5 words) description of the task'),
          prompt: str('The task for the agent to perform'),
          subagent_type: str('The type of specialized agent to use'),
        },
        ['description', 'prompt', 'subagent_type'],
      ),
    ],
    [
      'patch',
      longDescription('Applies a unified diff patch to one or more files.', 11, 500),
      obj({ patchText: str('The full patch text to apply') }, ['patchText']),
    ],
  ];
  return tools.map(([name, description, parameters]) => ({ type: 'function', function: { name, description, parameters } }));
}

const IDENTS = [
  'config',
  'session',
  'request',
  'cache',
  'entry',
  'plan',
  'branch',
  'digest',
  'reader',
  'stream',
  'client',
  'result',
  'options',
  'limits',
];
const TYPES = ['string', 'number', 'boolean', 'Buffer', 'Plan', 'Branch', 'Settings', 'Promise<void>'];

/** A TypeScript source file of about `bytes` bytes, with numbered lines as a read tool returns them. */
export function sourceFile(seed: number, bytes: number): string {
  const random = rng(seed);
  const lines: string[] = [];
  let size = 0;
  let n = 1;
  while (size < bytes) {
    const a = pick(random, IDENTS);
    const b = pick(random, IDENTS);
    const t = pick(random, TYPES);
    const kind = random();
    let line: string;
    if (kind < 0.15) line = `export function ${a}Of${b[0]!.toUpperCase()}${b.slice(1)}(${a}: ${t}): ${pick(random, TYPES)} {`;
    else if (kind < 0.3) line = `  const ${a} = await ${b}.lookup(${pick(random, IDENTS)}.anchor);`;
    else if (kind < 0.45) line = `  if (${a}.${b} === undefined) throw new Error(\`missing ${b} for \${${a}.id}\`);`;
    else if (kind < 0.55) line = `  // ${pick(random, GUIDELINES)}`;
    else if (kind < 0.7) line = `  return { ...${a}, ${b}: ${pick(random, IDENTS)}.${pick(random, IDENTS)} };`;
    else if (kind < 0.8) line = '}';
    else line = `  ${a}.${b} = ${Math.floor(random() * 10_000)};`;
    const numbered = `${String(n++).padStart(5, '0')}| ${line}`;
    lines.push(numbered);
    size += numbered.length + 1;
  }
  return lines.join('\n');
}

/** Test-runner output with a failure and its stack, about `bytes` bytes. */
export function testOutput(seed: number, bytes: number, failing: boolean): string {
  const random = rng(seed);
  const lines = ['> vitest run', ''];
  let size = 0;
  while (size < bytes) {
    const line = ` ✓ src/${pick(random, IDENTS)}/${pick(random, IDENTS)}.test.ts > ${pick(random, IDENTS)} ${pick(random, ['keeps', 'drops', 'refuses', 'records'])} the ${pick(random, IDENTS)} (${Math.floor(random() * 40)} ms)`;
    lines.push(line);
    size += line.length + 1;
  }
  if (failing) {
    lines.push(
      ' ✗ src/cache/store.test.ts > record refuses a stale version',
      '   AssertionError: expected { recorded: true } to deeply equal { recorded: false, reason: "conflict" }',
      '    ❯ src/cache/store.test.ts:214:31',
      '    ❯ processTicksAndRejections node:internal/process/task_queues:95:5',
    );
  }
  lines.push(
    '',
    ` Test Files  ${failing ? '1 failed | ' : ''}41 passed (42)`,
    `      Tests  ${failing ? '1 failed | ' : ''}388 passed (389)`,
  );
  return lines.join('\n');
}

/** grep-style matches, about `bytes` bytes. */
export function grepOutput(seed: number, bytes: number): string {
  const random = rng(seed);
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    const line = `src/${pick(random, IDENTS)}/${pick(random, IDENTS)}.ts:${Math.floor(random() * 400) + 1}:  const ${pick(random, IDENTS)} = ${pick(random, IDENTS)}.${pick(random, IDENTS)}(${pick(random, IDENTS)});`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

/** A user message of about `bytes` bytes: a request, sometimes with a pasted log. */
export function userText(seed: number, bytes: number): string {
  const random = rng(seed);
  const asks = [
    'Can you look at why the cache keeps a branch after its chat is gone?',
    'Now make the change, keeping the public API as it is.',
    'The tests fail on CI but pass locally; here is the log.',
    'Please add a test for the conflict case and run the suite.',
    'Explain what the lease is for before you touch it.',
    'Refactor this into a smaller function without changing behaviour.',
  ];
  let text = pick(random, asks);
  if (bytes > 400) text += `\n\n\`\`\`\n${testOutput(seed + 1, bytes - text.length - 10, true)}\n\`\`\``;
  while (Buffer.byteLength(text) < bytes) text += ` ${pick(random, GUIDELINES)}`;
  return text;
}
