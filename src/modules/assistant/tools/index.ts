// The tools the assistant offers the model (gaps.md "Assistant"; docs/assistant.md "Tools" lists
// each with what it may see). Read tools run when called, with the person's permissions; write
// tools only describe their change until the person approves it (./types.ts).
import { bulkUpdateTickets } from './bulk.js';
import { getContactTool, searchContactsTool } from './contacts.js';
import { getArticleTool, searchArticles } from './knowledge.js';
import { addNote, replyToTicket, updateTicketTool } from './ticket-writes.js';
import { getTicket, searchTickets } from './tickets-read.js';
import type { AssistantTool } from './types.js';
import { getReport, listAutomationsTool, listViewsTool } from './workspace-read.js';

export const TOOLS: readonly AssistantTool[] = [
  searchTickets,
  getTicket,
  searchContactsTool,
  getContactTool,
  searchArticles,
  getArticleTool,
  listViewsTool,
  listAutomationsTool,
  getReport,
  updateTicketTool,
  replyToTicket,
  addNote,
  bulkUpdateTickets,
];

/** A tool by the name the model called it, or undefined. */
export const toolNamed = (name: string): AssistantTool | undefined => TOOLS.find((t) => t.name === name);
