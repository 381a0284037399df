// Small enhancements: copy buttons, confirmations before destructive forms, select-on-focus.
(function () {
  'use strict';

  function textOf(target) {
    if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement) return target.value;
    return target.textContent || '';
  }

  function fallbackCopy(target, text) {
    if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement) {
      target.focus();
      target.select();
    } else {
      var range = document.createRange();
      range.selectNodeContents(target);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    }
    try {
      return document.execCommand('copy');
    } catch (e) {
      return text.length === 0;
    }
  }

  Array.prototype.forEach.call(document.querySelectorAll('[data-copy]'), function (button) {
    var target = document.querySelector(button.getAttribute('data-copy'));
    if (!target) return;
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener('click', function () {
      var text = textOf(target);
      var done = function (ok) {
        button.textContent = ok ? 'Copied ✓' : 'Press Ctrl+C to copy';
        setTimeout(function () {
          button.textContent = label;
        }, 2500);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(
          function () { done(true); },
          function () { done(fallbackCopy(target, text)); }
        );
      } else {
        done(fallbackCopy(target, text));
      }
    });
  });

  Array.prototype.forEach.call(document.querySelectorAll('form[data-confirm]'), function (form) {
    form.addEventListener('submit', function (event) {
      if (!window.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
    });
  });

  Array.prototype.forEach.call(document.querySelectorAll('[data-select-on-focus]'), function (input) {
    input.addEventListener('focus', function () {
      input.select();
    });
  });
})();
