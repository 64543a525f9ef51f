/** Every reason a plan can give, with the sentence `inspect` and the README use for it. */
export const REASONS = {
  disabled:
    'resume is off: CURSOR_RESUME_ENABLED or the resume setting says so, or neither is set and CURSOR_ACP_SESSION_RESUME is not on (config list says which)',
  'plain-text': 'the transcript is plain text, whose structure cannot be proven',
  'caller-resume': 'the caller chose a chat itself with --resume or --continue; a run forgets what the cache held of that chat',
  'side-call': 'a title or other metadata prompt: it never resumes and never touches the cache',
  'plugin-resumes':
    "OpenCode's Cursor plugin resumes chats itself (CURSOR_ACP_SESSION_RESUME is on): a chat cursor-resume continued could be one the plugin continues for another session, so its prompts are passed on as they are",
  'no-anchor': 'the conversation has no real user message to anchor it',
  'no-cache': 'the helper could not be reached, so nothing is known about earlier turns',
  'no-entry': 'no earlier turn of this conversation is known',
  expired: 'the known chat is older than the cache lifetime',
  'unsafe-chat-id': 'the known chat ID is not of the allowed form',
  'tools-changed': 'the tool definitions differ from those the chat was started with',
  diverged: 'the transcript does not begin with the messages the chat knows',
  'system-changed': 'a system message differs from the one the chat was given (a new date, another agent): a fresh chat gets the new one',
  'nothing-new': 'the transcript adds no message to what the chat knows',
  interrupted: "the chat's last turn never finished, so its history is unknown",
  'chat-missing': "the chat is gone from Cursor's chat store",
  busy: 'another run is driving this chat right now',
  'unsafe-delta': 'the new messages cannot be sent faithfully as text',
  'resume-failed': 'cursor-agent could not resume the chat, so the turn was run again as a fresh chat',
  delta: 'the chat knows every earlier message: only the new ones are sent',
} as const;

export type Reason = keyof typeof REASONS;
