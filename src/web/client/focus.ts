// Where the keyboard goes after an action, so it never drops to the page's
// body: after a decision, the next card still waiting for one (its phrase
// box or its Approve), else the composer; after "+ New" or switching
// sessions, the composer (chat.tsx). Phones are left alone (focusing the
// composer there would open the keyboard over the chat).
const coarse = () => matchMedia("(pointer: coarse)").matches;

/** Focuses the composer, unless on a touch screen. */
export function focusComposer(): void {
  if (coarse()) return;
  document.querySelector<HTMLTextAreaElement>(".composer textarea")?.focus();
}

/** After the card of `approvalId` was decided: the next waiting card, or the composer. */
export function focusAfterDecision(approvalId: string): void {
  // After the re-render that removed the card's buttons.
  setTimeout(() => {
    const card = document.querySelector(`[data-approval="${CSS.escape(approvalId)}"]`);
    const waiting = Array.from(
      document.querySelectorAll<HTMLElement>(".decide input.confirm-input, .decide button.approve, .decide button.reject"),
    );
    const next = waiting.find(
      (el) =>
        !el.closest(`[data-approval="${CSS.escape(approvalId)}"]`) &&
        (!card || card.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING),
    );
    if (next) {
      next.focus();
      return;
    }
    const composer = document.querySelector<HTMLTextAreaElement>(".composer textarea");
    if (composer) composer.focus();
    else if (card instanceof HTMLElement) {
      card.tabIndex = -1;
      card.focus();
    }
  }, 0);
}
