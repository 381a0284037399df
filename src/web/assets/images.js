// Images that cannot be shown (a broken address, or one the page's Content-Security-Policy does
// not load, such as http:// in an article body) become a placeholder naming the address.
(function () {
  'use strict';

  function placeholder(image) {
    var box = document.createElement('p');
    box.className = 'image-placeholder';
    box.setAttribute('role', 'img');
    box.setAttribute('aria-label', (image.getAttribute('alt') || 'Image') + ': not shown');
    var title = document.createElement('strong');
    title.textContent = 'Image not shown. ';
    box.appendChild(title);
    var src = image.getAttribute('src') || '';
    var reason = image.getAttribute('data-placeholder') ||
      (/^http:\/\//i.test(src)
        ? 'Pages of Anchorage load images over https only, and this one is at an insecure (http) address:'
        : 'The image at this address could not be loaded:');
    box.appendChild(document.createTextNode(reason + ' '));
    var address = document.createElement('code');
    address.className = 'image-address';
    address.textContent = src;
    box.appendChild(address);
    image.replaceWith(box);
  }

  var images = document.querySelectorAll('img.featured, .prose img');
  Array.prototype.forEach.call(images, function (image) {
    if (image.complete && image.naturalWidth === 0) placeholder(image);
    else image.addEventListener('error', function () { placeholder(image); });
  });
})();
