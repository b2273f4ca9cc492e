// Not built yet: the screen says so and where the same is done through the API meanwhile.
import { NotYet, PageTitle } from '../../ui/page';

export function Chats() {
  return (
    <div className="screen">
      <PageTitle>Chats</PageTitle>
      <NotYet />
    </div>
  );
}
