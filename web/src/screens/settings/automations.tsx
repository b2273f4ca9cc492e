// Not built yet: the section says so and where the same is done through the API meanwhile.
import { NotYet } from '../../ui/page';
import type { SectionProps } from './sections';

export default function Section(_: SectionProps) {
  return <NotYet />;
}
