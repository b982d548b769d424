// j / k for the review app. Listens on the app's root (found by class once attached) so the keys work
// wherever the reader clicked in the app, but not while typing in a text box. `data-lm-suppress-shortcuts`
// tells JupyterLab not to treat the same key press as "move to the next/previous cell"; JupyterLab focuses
// the cell on mousedown, so a click on a non-input part of the app takes the focus back to the app's root.
const TYPING = ["INPUT", "TEXTAREA", "SELECT", "BUTTON", "OPTION"];
function render({ model, el }) {
  el.classList.add("wb-keys");
  el.textContent = "keys: j next · k previous (click the app first)";
  let root = null, tries = 0;
  const onKey = (event) => {
    const t = event.target;
    if (t && (t.isContentEditable || TYPING.includes(t.tagName))) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "j" || event.key === "k") {
      event.preventDefault();
      event.stopPropagation();
      model.send({ key: event.key });
    }
  };
  const onClick = (event) => {
    const t = event.target;
    if (t && (t.isContentEditable || TYPING.includes(t.tagName) || t.closest("a, button, select, textarea, input"))) return;
    root.focus({ preventScroll: true });
  };
  const attach = () => {
    root = el.closest(".wb-app");
    if (!root) {  // not in the DOM yet: ipywidgets attaches children after rendering them
      if (tries++ < 100) setTimeout(attach, 100);
      return;
    }
    root.setAttribute("data-lm-suppress-shortcuts", "true");
    if (!root.hasAttribute("tabindex")) root.tabIndex = 0;
    root.addEventListener("keydown", onKey);
    root.addEventListener("click", onClick);
  };
  attach();
  return () => {
    if (root) {
      root.removeEventListener("keydown", onKey);
      root.removeEventListener("click", onClick);
    }
  };
}
export default { render };
