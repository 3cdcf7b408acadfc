// Render the \( \) and \[ \] that Sphinx writes (and any $...$ left in a page) with the KaTeX
// the package ships; a formula KaTeX cannot read is left as it is and logged, never hidden.
document.addEventListener("DOMContentLoaded", function () {
  renderMathInElement(document.body, {
    delimiters: [
      {left: "\\[", right: "\\]", display: true},
      {left: "$$", right: "$$", display: true},
      {left: "\\(", right: "\\)", display: false},
      {left: "$", right: "$", display: false},
    ],
    throwOnError: false,
  });
});
