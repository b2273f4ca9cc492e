// A part of a frame that may go missing without taking the frame with it (the sidebar's
// onboarding checklist): when it throws, nothing is shown in its place, and it is tried again when
// the server answers again (lib/reachable.ts) or its parent renders it anew.
import { Component, type ReactNode } from 'react';
import { retryScreens } from '../lib/lazy';
import { onComeback } from '../lib/reachable';

export class Quiet extends Component<{ children: ReactNode }, { failed: boolean }> {
  override state = { failed: false };
  #off: (() => void) | null = null;

  static getDerivedStateFromError() {
    return { failed: true };
  }

  override componentDidMount() {
    this.#off = onComeback(() => {
      if (!this.state.failed) return;
      retryScreens();
      this.setState({ failed: false });
    });
  }

  override componentWillUnmount() {
    this.#off?.();
  }

  override render() {
    return this.state.failed ? null : this.props.children;
  }
}
