// Automations (GET/POST /v1/automations, GET/PATCH/DELETE /v1/automations/{id}): the list in run
// order (list.tsx), and the builder at /settings/automations/new and /settings/automations/<id>
// (editor.tsx, with its conditions.tsx and actions.tsx rows; choices.tsx says what they offer).
import '../integrations.css';
import type { SectionProps } from '../section';
import { AutomationEditor } from './editor';
import { AutomationList } from './list';

export default function Automations({ path }: SectionProps) {
  const [id] = path;
  if (id) return <AutomationEditor key={id} id={id === 'new' ? null : id} />;
  return <AutomationList />;
}
