/**
 * Image thumbnails and the image script data's bounds (parsers/product_images.ts). Thumbnails are
 * the page's own small copies: the script data's `thumb` (a different image id, `_AC_US40_` or
 * `_SR38,50_`), the mobile page's full-screen carousel `_SS126_` copy; never the large image again.
 * Values read off the corpus pages by hand (zcat tests/fixtures/product/… | grep colorImages).
 */
import assert from "node:assert/strict";
import { parseProduct } from "../parsers/product.ts";
import { colorImages, mobileImages } from "../parsers/product_images.ts";
import { fixture, fixtureMarketplace } from "./fixture.ts";

async function imagesOf(name: string) {
  return parseProduct(await fixture(name), { marketplace: fixtureMarketplace(name) }).images;
}

Deno.test("images: each colorImages entry is thumbnailed by its own 'thumb', not by its large image", async () => {
  // 'initial': [{"hiRes":"…/616K-cvwcsL._AC_SL1500_.jpg","thumb":"…/31FMBj3VqgL._AC_US40_.jpg",…
  const ae = await imagesOf("product/amazon.ae__aparser-B00LAYVPOU.html");
  assert.deepEqual(ae.slice(0, 3), [
    {
      url: "https://m.media-amazon.com/images/I/616K-cvwcsL._AC_SL1500_.jpg",
      width: null,
      height: null,
      thumbnail: "https://m.media-amazon.com/images/I/31FMBj3VqgL._AC_US40_.jpg",
    },
    {
      url: "https://m.media-amazon.com/images/I/61vM7n3lzzL._AC_SL1000_.jpg",
      width: null,
      height: null,
      thumbnail: "https://m.media-amazon.com/images/I/412EO9EEKML._AC_US40_.jpg",
    },
    {
      url: "https://m.media-amazon.com/images/I/61WOCo2KUJL._AC_SL1500_.jpg",
      width: null,
      height: null,
      thumbnail: "https://m.media-amazon.com/images/I/31Z+p0XDWiL._AC_US40_.jpg",
    },
  ]);
  // 2016 layout: images-na host, "_SR38,50_" thumbs.
  const ca = await imagesOf("product/amazon.ca__app-B01GAWQSFW.html");
  assert.deepEqual(ca[0], {
    url: "https://images-na.ssl-images-amazon.com/images/I/61hmDCa5stL._UL1001_.jpg",
    width: null,
    height: null,
    thumbnail: "https://images-na.ssl-images-amazon.com/images/I/41ZKssAM9zL._SR38,50_.jpg",
  });
  for (const image of [...ae, ...ca]) assert.notEqual(image.thumbnail, image.url);
});

Deno.test("images: the mobile page's thumbnails are the full-screen carousel's _SS126_ copies", async () => {
  const images = await imagesOf("product/amazon.co.jp__jack-mobile-shoeido-bouchuko.html");
  assert.deepEqual(images, [
    {
      url: "https://m.media-amazon.com/images/I/41OppoDa9PL._AC_SL1500_.jpg",
      width: null,
      height: null,
      thumbnail: "https://m.media-amazon.com/images/I/41OppoDa9PL._SS126_.jpg",
    },
    {
      url: "https://m.media-amazon.com/images/I/41P5+ImN1ML._AC_SL1500_.jpg",
      width: null,
      height: null,
      thumbnail: "https://m.media-amazon.com/images/I/41P5+ImN1ML._SS126_.jpg",
    },
  ]);
});

const IMG = "https://m.media-amazon.com/images/I/";

Deno.test("images (mobile): the full-screen _SL1500_ copy is the image wherever it stands, before or after the media block", () => {
  const fullScreen = `<div class="a-image-wrapper immersive-carousel-img-manual-load" ` +
    `data-a-hires="${IMG}41OppoDa9PL._AC_SL1500_.jpg"></div>` +
    `<div class="a-image-wrapper immersive-carousel-img-manual-load" ` +
    `data-a-hires="${IMG}41OppoDa9PL._SS126_.jpg"></div>`;
  const mediaBlock = `<img alt="" class="imageLeft0 altImage media-block-image-tag" ` +
    `data-a-hires="${IMG}41OppoDa9PL._AC_UF894,1000_QL80_FMwebp_.jpg">`;
  const expected = [{
    url: `${IMG}41OppoDa9PL._AC_SL1500_.jpg`,
    width: null,
    height: null,
    thumbnail: `${IMG}41OppoDa9PL._SS126_.jpg`,
  }];
  assert.deepEqual(mobileImages(`<body>${mediaBlock}${fullScreen}</body>`), expected);
  assert.deepEqual(mobileImages(`<body>${fullScreen}${mediaBlock}</body>`), expected);
  // Without a full-screen copy, the media block's own image stands for both.
  assert.deepEqual(mobileImages(`<body>${mediaBlock}</body>`), [{
    url: `${IMG}41OppoDa9PL._AC_UF894,1000_QL80_FMwebp_.jpg`,
    width: null,
    height: null,
    thumbnail: `${IMG}41OppoDa9PL._AC_UF894,1000_QL80_FMwebp_.jpg`,
  }]);
});

Deno.test("images (script data): 'initial' is read a few lines after 'colorImages', not far away", () => {
  const initial = `'initial': [{"hiRes":"${IMG}616K-cvwcsL._AC_SL1500_.jpg",` +
    `"thumb":"${IMG}31FMBj3VqgL._AC_US40_.jpg","large":"${IMG}31FMBj3VqgL._AC_.jpg"}]`;
  const expected = [{
    url: `${IMG}616K-cvwcsL._AC_SL1500_.jpg`,
    width: null,
    height: null,
    thumbnail: `${IMG}31FMBj3VqgL._AC_US40_.jpg`,
  }];
  // Pretty-printed: a newline and indentation between the two keys.
  assert.deepEqual(
    colorImages(`var data = {\n        'colorImages': {\n                ${initial}\n        }};`),
    expected,
  );
  // An 'initial' hundreds of characters on belongs to other data.
  assert.equal(
    colorImages(`var data = { 'colorImages': {}, 'note': '${"x".repeat(300)}', ${initial} };`),
    null,
  );
});
