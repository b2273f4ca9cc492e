// A view's ticket count in the sidebar; while it is not known (not loaded yet, or the request
// failed) a dash, named "count unknown" for screen readers: never a 0 that is not one.
import { noun } from './words';

export function TicketCount({ n }: { n: number | undefined }) {
  if (n === undefined) {
    return (
      <span className="count count-unknown">
        <span aria-hidden="true" title="Count unknown">
          –
        </span>
        <span className="visually-hidden"> tickets: count unknown</span>
      </span>
    );
  }
  return (
    <span className="count">
      {n}
      <span className="visually-hidden"> {noun(n, 'ticket')}</span>
    </span>
  );
}
