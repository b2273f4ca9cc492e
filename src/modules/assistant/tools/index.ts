// The tools the assistant offers the model (gaps.md "Assistant"; docs/assistant.md lists each with
// what it may see). Filled by the tools' own files in this folder.
import type { AssistantTool } from './types.js';

export const TOOLS: readonly AssistantTool[] = [];
