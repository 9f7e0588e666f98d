import assert from "node:assert/strict";
import { parseProduct } from "../parsers/product.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { ProductPage } from "../schemas/pages.ts";
import { fixture, fixtureMarketplace, fixtureNames } from "./fixture.ts";

/**
 * Values read off each corpus page by hand (grep of the HTML): title is a prefix, bullet a prefix
 * of the first feature bullet, availability a prefix of #availability, price [amount, currency,
 * list_price]. Where the source repo states expected values (MANIFEST expected_values_location)
 * they agree with these unless a comment says otherwise:
 * - rejoiceinhope/amazon-page-parser tests/conftest.py: titles, star and review counts of the
 *   us/uk/de/fr/ca pages (us book 4.6 / 621, uk book 5.0 / 17, de book 4.2 / 56, fr DVD 1.3 / 3,
 *   fr CD 4.3 / 34, us CD 4.3 / 33, the apparel and watch pages 0 / 0), their feature bullets
 *   (ca apparel 6, uk apparel 8) and details rows (checked in the product_facts test below);
 * - samirrayani/metascraper-shopping test/price.test.js: 29.99 (sconce), 12.48 (Gorilla tape);
 * - webapis/amazon-offers detailPageScraper.test.js: price $14.97;
 * - sapila/amazon-scraper ProductPageScraperTest.php: seller "Amazon" and "Quick WinOut".
 * - weih1214/amazon-crawler earphone1.json was not consulted for numbers: the page itself shows
 *   4.4 stars and 40,325 reviews.
 */
interface Expected {
  asin: string;
  title: string;
  brand: string;
  price: [number, string, number | null] | null;
  rating: number;
  reviews: number;
  images: number;
  bullet: string;
  in_stock: boolean;
  availability: string;
  merchant: string;
  parent: string;
}

const EXPECTED: [string, Expected][] = [
  // Read off the page: productTitle; byline "Marca: AMD"; the buy box's a-offscreen
  // "R$1.499,99" (the R$ 1.645,19 elsewhere is the instalment total, not a struck-through
  // price); acrPopover "4,8 de 5 estrelas"; "1.820 avaliações de clientes"; five hiRes entries
  // in colorImages; "Em estoque"; sold by Amazon.com.br; "parentAsin":"B0D6NN6TM7".
  ["amazon.com.br__mzmvyp-B0D6NN6TM7.html", {
    "asin": "B0D6NN6TM7",
    "title": "Processador AMD Ryzen 5 9600X Box (AM5/ 6 Cores",
    "brand": "AMD",
    "price": [1499.99, "BRL", null],
    "rating": 4.8,
    "reviews": 1820,
    "images": 5,
    "bullet": "Aproveite a velocidade que o processador",
    "in_stock": true,
    "availability": "Em estoque",
    "merchant": "Amazon.com.br",
    "parent": "B0D6NN6TM7",
  }],
  // The mobile web layout (a-touch a-mobile, prettified by BeautifulSoup). Read off the page:
  // span#title; byline "香源のストアを表示" ("visit the 香源 store"), the overview's ブランド row
  // 香源; corePriceDisplay_mobile "￥1,638" (aok-offscreen copy); "5つ星のうち4.1" and "(201)"
  // in the mobile rating link; two images in the media-block carousel (41OppoDa9PL,
  // 41P5+ImN1ML); #feature-bullets "原産国 : 日本"; availability "残り11点 ご注文はお早めに";
  // the seller link's own text (the shop puts its instructions in its name).
  ["amazon.co.jp__jack-mobile-shoeido-bouchuko.html", {
    "asin": "B002XA6AU4",
    "title": "香源 松栄堂の防虫香 上品 防虫香 10袋入 #520138",
    "brand": "香源",
    "price": [1638, "JPY", null],
    "rating": 4.1,
    "reviews": 201,
    "images": 2,
    "bullet": "原産国 : 日本",
    "in_stock": true,
    "availability": "残り11点",
    "merchant":
      "【香老舗 淡路梅薫堂】先様へ直送時、送り主名表示【ギフト設定】必要❗カード払い⭕️送り主は請求先情報",
    "parent": "B002XA6AU4",
  }],
  ["amazon.ae__aparser-B00LAYVPOU.html", {
    "asin": "B00LAYVPOU",
    "title": "Philips Viva Collection Compact Juicer, ",
    "brand": "Versuni",
    "price": [330, "AED", null],
    "rating": 4.4,
    "reviews": 5136,
    "images": 8,
    "bullet": "Get more goodness in everyday ",
    "in_stock": true,
    "availability": "Usually ships within 5 to",
    "merchant": "EGKStore",
    "parent": "B07KV4J4S8",
  }],
  ["amazon.ae__aparser-B0D37RC231.html", {
    "asin": "B0D37RC231",
    "title": "BOSCH Series 4 Bagless Vacuum Cleaner 20",
    "brand": "Bosch",
    "price": null,
    "rating": 0,
    "reviews": 0,
    "images": 7,
    "bullet": "10 years motor guarantee",
    "in_stock": false,
    "availability": "Temporarily out of stock.",
    "merchant": "",
    "parent": "B0D37RC231",
  }],
  ["amazon.ca__app-B01GAWQSFW.html", {
    "asin": "B01GAWQSFW",
    "title": "Simple Leather Vintage Female Quartz Wat",
    "brand": "LinTimes",
    "price": [5.77, "CAD", null],
    "rating": 0,
    "reviews": 0,
    "images": 4,
    "bullet": "Vintage bracelet wrist watch f",
    "in_stock": true,
    "availability": "In Stock.",
    "merchant": "LinTimes Online",
    "parent": "",
  }],
  ["amazon.ca__app-B07CL39Z8Q.html", {
    "asin": "B07CL39Z8Q",
    "title": "Palarn Women Tops, Sexy O-Neck Flora Pri",
    "brand": "Palarn",
    "price": null,
    "rating": 0,
    "reviews": 0,
    "images": 7,
    "bullet": "Cotton Blended",
    "in_stock": false,
    "availability": "Currently unavailable. We",
    "merchant": "",
    "parent": "",
  }],
  ["amazon.co.uk__app-B07CL39Z8Q.html", {
    "asin": "B07CL39Z8Q",
    "title": "Palarn Women Tops, Sexy O-Neck Flora Pri",
    "brand": "Palarn",
    "price": null,
    "rating": 0,
    "reviews": 0,
    "images": 7,
    "bullet": "Casual print tank tops blouse ",
    "in_stock": false,
    "availability": "Currently unavailable. We",
    "merchant": "",
    "parent": "",
  }],
  ["amazon.co.uk__app-book-0062796984.html", {
    "asin": "0062796984",
    "title": "The Confidence Code for Girls: Taking Ri",
    "brand": "",
    "price": [8.99, "GBP", null],
    "rating": 5,
    "reviews": 17,
    "images": 1,
    "bullet": "",
    "in_stock": true,
    "availability": "In stock.",
    "merchant": "Amazon",
    "parent": "",
  }],
  ["amazon.co.uk__metascraper-book-1849757097.html", {
    "asin": "1849757097",
    "title": "Vegetable Perfection: 100 delicious reci",
    "brand": "",
    "price": [4.45, "GBP", null],
    "rating": 4.4,
    "reviews": 16,
    "images": 1,
    "bullet": "",
    // Sold used only: #usedOnlyBuybox's "Add to Basket" (add-to-cart-button-ubb) buys it.
    "in_stock": true,
    "availability": "",
    "merchant": "Goldstone-Books",
    "parent": "1849757097",
  }],
  ["amazon.com__app-B07H57DNVV.html", {
    "asin": "B07H57DNVV",
    "title": "Anthem Of The Peaceful Army",
    "brand": "",
    "price": [11.88, "USD", null],
    "rating": 4.3,
    "reviews": 33,
    "images": 2,
    "bullet": "",
    "in_stock": true,
    "availability": "In Stock.",
    "merchant": "Amazon.com",
    "parent": "B07H57DNVV",
  }],
  ["amazon.com__app-book-0131103628.html", {
    "asin": "0131103628",
    "title": "C Programming Language, 2nd Edition",
    "brand": "",
    "price": [35.64, "USD", 67],
    "rating": 4.6,
    "reviews": 621,
    "images": 1,
    "bullet": "",
    "in_stock": true,
    "availability": "In Stock.",
    "merchant": "Amazon.com",
    "parent": "0131103628",
  }],
  ["amazon.com__matous-B0CD9645MM-missing-desc.html", {
    "asin": "B0CD9645MM",
    "title": "SAMSUNG Galaxy S23 FE AI Phone, 128GB Un",
    "brand": "SAMSUNG",
    "price": [549.99, "USD", 599.99],
    "rating": 4.5,
    "reviews": 1129,
    "images": 14,
    "bullet": "GALAXY AI IS HERE: Search like",
    "in_stock": true,
    "availability": "",
    "merchant": "Amazon.com",
    "parent": "B0D9R1NTNZ",
  }],
  ["amazon.com__metascraper-B0057OC5O8.html", {
    "asin": "B0057OC5O8",
    "title": "SainSmart 4-Channel Relay Module",
    "brand": "SainSmart",
    "price": [8.99, "USD", null],
    "rating": 4.6,
    "reviews": 422,
    "images": 1,
    "bullet": "5V 4-Channel Relay interface b",
    "in_stock": true,
    "availability": "In Stock",
    "merchant": "SainSmart Official",
    "parent": "B0B31MHVGM",
  }],
  ["amazon.com__metascraper-kindle-B0011UCPM4.html", {
    "asin": "B0011UCPM4",
    "title": "The Whole Truth (A. Shaw Book 1)",
    "brand": "",
    "price": [10.99, "USD", null],
    "rating": 4.4,
    "reviews": 21200,
    "images": 1,
    "bullet": "",
    "in_stock": true,
    "availability": "",
    "merchant": "Hachette Book Group",
    "parent": "B0011UCPM4",
  }],
  ["amazon.com__msheraz-B0823MDHDJ.html", {
    "asin": "B0823MDHDJ",
    "title": "SLOWPLAY 14g Clay Poker Chips Set for Te",
    "brand": "SLOWPLAY",
    "price": [159, "USD", null],
    "rating": 4.7,
    "reviews": 1596,
    "images": 6,
    "bullet": "The first professional and hob",
    "in_stock": true,
    "availability": "In Stock",
    "merchant": "SLOWPLAY",
    "parent": "B0FXGGT569",
  }],
  ["amazon.com__msheraz-B0G6KD54ZK.html", {
    "asin": "B0G6KD54ZK",
    "title": "DUMOS Arched Full Length Mirror with Sta",
    "brand": "DUMOS",
    "price": [32.97, "USD", 49.99],
    "rating": 4.6,
    "reviews": 2357,
    "images": 7,
    "bullet": "Glass",
    "in_stock": true,
    "availability": "In Stock",
    "merchant": "Amazon.com",
    "parent": "B0DP95YZ8J",
  }],
  ["amazon.com__msshop-B00N150YS4.html", {
    "asin": "B00N150YS4",
    "title": 'Gorilla Black Duct Tape, 1.88" x 12 yd, ',
    "brand": "Gorilla",
    "price": [12.48, "USD", null],
    "rating": 4.8,
    "reviews": 8249,
    "images": 7,
    "bullet": "Heavy duty and double thick, G",
    "in_stock": true,
    "availability": "In Stock.",
    "merchant": "Amazon.com",
    "parent": "B097JJZ9SG",
  }],
  ["amazon.com__msshop-B07G2L3JMM.html", {
    "asin": "B07G2L3JMM",
    "title": "Modern LED Wall Sconce Lighting Fixture ",
    "brand": "ChangM",
    "price": [29.99, "USD", null],
    "rating": 4.4,
    "reviews": 82,
    "images": 9,
    "bullet": "【Natural Protection Materials】",
    "in_stock": true,
    "availability": "In Stock.",
    "merchant": "Direct ChangM",
    "parent": "",
  }],
  ["amazon.com__pavel-ipad-pro-m2.html", {
    "asin": "B0BJLF3RR3",
    "title": "Apple iPad Pro 11-inch (4th Generation):",
    "brand": "Apple",
    "price": [749, "USD", 799],
    "rating": 4.8,
    "reviews": 1222,
    "images": 7,
    "bullet": "WHY IPAD PRO — iPad Pro is the",
    "in_stock": true,
    "availability": "",
    "merchant": "Amazon.com",
    "parent": "B0BJPKBT1K",
  }],
  ["amazon.com__pricechecker-charmast-powerbank.html", {
    "asin": "B0DR8G428S",
    "title": "charmast 20000mAh Portable Charger with ",
    "brand": "charmast",
    "price": [35.99, "USD", 45.99],
    "rating": 4.2,
    "reviews": 226,
    "images": 1,
    "bullet": "All-in-One Charging Design: Th",
    "in_stock": true,
    "availability": "In Stock",
    "merchant": "Chen Ying Ke Ji",
    "parent": "B0FH9S2VQV",
  }],
  ["amazon.com__soko-B07FNW9FGJ.html", {
    "asin": "B07FNW9FGJ",
    "title": "Got Data Funny Business Data Analyst T-S",
    "brand": "Data Analyst & Business Analytics Tees",
    "price": [15.99, "USD", null],
    "rating": 4.4,
    "reviews": 22,
    "images": 2,
    "bullet": "Got Data is a funny pickup per",
    "in_stock": true,
    "availability": "In Stock",
    "merchant": "Amazon.com",
    "parent": "B07FNW9FGJ",
  }],
  ["amazon.com__webapis-B004OA758C.html", {
    "asin": "B004OA758C",
    "title": "VTech CS6114 DECT 6.0 Cordless Phone wit",
    "brand": "VTech",
    "price": [14.97, "USD", 19.95],
    "rating": 4.2,
    "reviews": 23358,
    "images": 3,
    "bullet": "Caller ID/Call waiting—stores ",
    "in_stock": true,
    "availability": "In Stock.",
    "merchant": "Amazon.com",
    "parent": "B08V3MHKW2",
  }],
  ["amazon.com__weih-earphone1.html", {
    "asin": "B003EM8008",
    "title": "Panasonic RP-HJE120-PPK In-Ear Headphone",
    "brand": "Panasonic",
    "price": [10.86, "USD", 15],
    "rating": 4.4,
    "reviews": 40325,
    "images": 6,
    "bullet": "Black ultra-soft ErgoFit in-ea",
    "in_stock": true,
    "availability": "In Stock.",
    "merchant": "Amazon.com",
    "parent": "B0055AVO4Q",
  }],
  ["amazon.com__wk-B0BN72FYFG-renewed.html", {
    "asin": "B0BN72FYFG",
    "title": "Apple iPhone 14, 128GB, Midnight - Unloc",
    // The byline is "Visit the Amazon Renewed Store"; the overview's Brand row says Apple.
    "brand": "Apple",
    "price": [347.99, "USD", 410.4],
    "rating": 4.1,
    "reviews": 4266,
    "images": 4,
    "bullet": "This phone is unlocked and com",
    "in_stock": true,
    "availability": "In Stock",
    "merchant": "DirectCertified",
    "parent": "B0BY5V81ST",
  }],
  ["amazon.de__app-B01LW7X0JJ.html", {
    "asin": "B01LW7X0JJ",
    "title": "Abnehmbarer dehnbar Gummiband Schutzhüll",
    "brand": "sourcing map",
    "price": [6.37, "EUR", null],
    "rating": 0,
    "reviews": 0,
    "images": 9,
    "bullet": "Weich, bequem und knitterarm, ",
    "in_stock": true,
    "availability": "Auf Lager.",
    "merchant": "Weisser Berg",
    "parent": "B01LY1JHS7",
  }],
  ["amazon.de__app-book-0131103628.html", {
    "asin": "0131103628",
    "title": "The C Programming Language. (Prentice Ha",
    "brand": "",
    "price": [39.43, "EUR", null],
    "rating": 4.2,
    "reviews": 56,
    "images": 1,
    "bullet": "",
    "in_stock": true,
    "availability": "Nur noch 1 auf Lager",
    "merchant": "NITZ OVERSEAS",
    "parent": "",
  }],
  ["amazon.de__epic-B0BG6843GX.html", {
    "asin": "B0BG6843GX",
    "title": "Intel® Core™ i7-13700K Desktop Processor",
    "brand": "Intel",
    "price": [431.55, "EUR", null],
    "rating": 4.7,
    "reviews": 460,
    "images": 3,
    "bullet": "Intel NUC BXNUC10I3FNH1 PC/Wor",
    "in_stock": true,
    "availability": "Available to ship in 1-2 ",
    "merchant": "Amazon",
    "parent": "B0BG6843GX",
  }],
  ["amazon.de__poonam-000004458X.html", {
    "asin": "000004458X",
    "title": "Old Spice Rasur Creme - 70 G (original) ",
    "brand": "Old Spice",
    "price": [8, "EUR", null],
    "rating": 4.3,
    "reviews": 430,
    "images": 1,
    "bullet": "Gute Schmierqualität in Old Sp",
    "in_stock": true,
    "availability": "Gewöhnlich versandfertig ",
    "merchant": "Merc Enterprises",
    "parent": "000004458X",
  }],
  ["amazon.de__sapila-B008TLGFW4.html", {
    "asin": "B008TLGFW4",
    "title": "Emsa 513357 Travel Mug Standard, Thermob",
    "brand": "Emsa",
    "price": [14.09, "EUR", 26.99],
    "rating": 4.8,
    "reviews": 14656,
    "images": 8,
    "bullet": "Stundenlanger Geschmack von fr",
    "in_stock": true,
    "availability": "Auf Lager.",
    "merchant": "Amazon",
    "parent": "B07TYPS8HY",
  }],
  ["amazon.de__sapila-B07VHLV8PQ.html", {
    "asin": "B07SPWLK8R",
    "title": "Tarot 4006 / 620KV Multiaxial Brushless ",
    "brand": "Tarot",
    "price": [119.99, "EUR", null],
    "rating": 0,
    "reviews": 0,
    "images": 4,
    "bullet": "4006/620KV Efficient Multi-Axi",
    "in_stock": true,
    "availability": "Gewöhnlich versandfertig ",
    "merchant": "Quick WinOut",
    "parent": "B07VHLV8PQ",
  }],
  ["amazon.es__metascraper-B01MUGXRT9.html", {
    "asin": "B01MUGXRT9",
    "title": "Cecotec Robot Limpiacristales Windroid 8",
    "brand": "Cecotec",
    "price": null,
    "rating": 4.1,
    "reviews": 5182,
    "images": 8,
    "bullet": "Navegación inteligente, cálcul",
    "in_stock": false,
    "availability": "",
    "merchant": "",
    "parent": "B01MUGXRT9",
  }],
  ["amazon.fr__app-B00004YS4O.html", {
    "asin": "B00004YS4O",
    "title": "The Cars : Live On Musikladen 1979",
    "brand": "",
    "price": [57.99, "EUR", null],
    "rating": 1.3,
    "reviews": 3,
    "images": 2,
    "bullet": "",
    // Sold used only: the used box's "Ajouter au panier" (add-to-cart-button-ubb) and its
    // "Vendu par DivertissementVotre" row.
    "in_stock": true,
    "availability": "",
    "merchant": "DivertissementVotre",
    "parent": "",
  }],
  ["amazon.fr__app-B07H57DNVV.html", {
    "asin": "B07H57DNVV",
    "title": "Anthem of the Peaceful Army",
    "brand": "",
    "price": [9.99, "EUR", null],
    "rating": 4.3,
    "reviews": 34,
    "images": 2,
    "bullet": "",
    "in_stock": true,
    "availability": "En stock.",
    "merchant": "Amazon",
    // Only in its script: `Item.parentAsin = 'B07H57DNVV';` (line 14025).
    "parent": "B07H57DNVV",
  }],
  ["amazon.fr__wishi-book-0241401127.html", {
    "asin": "0241401127",
    "title": "The Art of Avatar The Way of Water",
    "brand": "",
    "price": [33.69, "EUR", 40.13],
    "rating": 4.8,
    "reviews": 896,
    "images": 7,
    "bullet": "",
    "in_stock": true,
    "availability": "En stock",
    "merchant": "Amazon",
    "parent": "B0BG87BQHF",
  }],
  ["amazon.in__abhish-B0CYGXYXS6.html", {
    "asin": "B0D1G32M32",
    "title": "Skybags Unisex Brat 20L Premium Polyeste",
    "brand": "Skybags",
    "price": [589, "INR", 2100],
    "rating": 4.2,
    "reviews": 20042,
    "images": 9,
    "bullet": "2 Main Compartments 1 Front Zi",
    "in_stock": true,
    "availability": "In stock",
    "merchant": "RetailEZ Pvt Ltd",
    "parent": "B0CYGXYXS6",
  }],
  ["amazon.in__pricepulse-B0CS5XW6TN.html", {
    "asin": "B0CS5XW6TN",
    "title": "Samsung Galaxy S24 Ultra 5G AI Smartphon",
    "brand": "Samsung",
    "price": null,
    "rating": 4.6,
    "reviews": 4105,
    "images": 10,
    "bullet": "Galaxy AI - Welcome to the era",
    "in_stock": false,
    "availability": "Currently unavailable. We",
    "merchant": "",
    "parent": "B0CS5XW6TN",
  }],
];

const names = fixtureNames("product");

Deno.test("parseProduct() has an expectation for every product page of the corpus", () => {
  assert.deepEqual(EXPECTED.map(([n]) => `product/${n}`).sort(), names);
});

for (const [file, e] of EXPECTED) {
  const name = `product/${file}`;
  const mp = fixtureMarketplace(name);
  Deno.test(`parseProduct() reads title, price and rating on ${file}`, async () => {
    const p = ProductPage.parse(parseProduct(await fixture(name), { marketplace: mp }));
    assert.equal(p.asin, e.asin);
    assert.ok(p.url.endsWith(`/dp/${e.asin}`), p.url);
    assert.ok(p.title.startsWith(e.title), p.title);
    assert.equal(p.brand, e.brand);
    assert.deepEqual(p.price && [p.price.amount, p.price.currency, p.price.list_price], e.price);
    assert.equal(p.rating, e.rating);
    assert.equal(p.reviews_count, e.reviews);
    assert.equal(p.images.length, e.images);
    assert.ok((p.feature_bullets[0] ?? "").startsWith(e.bullet), p.feature_bullets[0]);
    assert.equal(p.feature_bullets.length === 0, e.bullet === "");
    assert.equal(p.in_stock, e.in_stock);
    assert.ok(p.availability.startsWith(e.availability), p.availability);
    assert.equal(p.availability === "", e.availability === "");
    assert.equal(p.merchant, e.merchant);
    assert.equal(p.variations.parent_asin, e.parent);
  });
}

Deno.test("parseProduct() builds the canonical url on the marketplace's host", async () => {
  const p = parseProduct(await fixture("product/amazon.de__sapila-B07VHLV8PQ.html"), {
    marketplace: "DE",
  });
  // input#ASIN names the displayed variation B07SPWLK8R; the canonical link names B07VHLV8PQ.
  assert.equal(p.url, "https://www.amazon.de/dp/B07SPWLK8R");
});

Deno.test("parseProduct() reads the detail tables of every layout into product_facts", async () => {
  const cases: [string, Record<string, string>][] = [
    ["product/amazon.com__app-book-0131103628.html", {
      "Paperback": "272 pages",
      "Publisher": "Prentice Hall; 2 edition (April 1, 1988)",
      "ISBN-13": "978-0131103627",
    }],
    ["product/amazon.ca__app-B01GAWQSFW.html", {
      "Item model number": "4331797957",
      "ASIN": "B01GAWQSFW",
    }],
    ["product/amazon.co.uk__app-B07CL39Z8Q.html", { "Boxed-product Weight": "45.4 g" }],
    ["product/amazon.de__app-B01LW7X0JJ.html", {
      "Größe und/oder Gewicht": "10 x 8 x 3 cm ; 118 g",
      "Modellnummer": "US-SA-AJD-159579",
    }],
    ["product/amazon.com__metascraper-kindle-B0011UCPM4.html", {
      "File size": "5482 KB",
      "ASIN": "B0011UCPM4",
    }],
    ["product/amazon.ae__aparser-B00LAYVPOU.html", {
      "Model Number": "HR1832/01",
      "Brand": "Versuni",
    }],
    ["product/amazon.com__soko-B07FNW9FGJ.html", {
      "Care instructions": "Machine Wash",
      "Department": "mens",
    }],
    ["product/amazon.com__pavel-ipad-pro-m2.html", {
      "Brand": "Apple",
      "Chip":
        "Apple M2 chip, 8-core CPU with 4 performance cores and 4 efficiency, cores, 10-core GPU, 16-core, Neural Engine, 100GB/s memory bandwidth, 8GB RAM on models with 128GB, 256GB, or 512GB storage, 16GB RAM on models with 1TB or 2TB storage",
    }],
  ];
  for (const [name, facts] of cases) {
    const p = parseProduct(await fixture(name), { marketplace: fixtureMarketplace(name) });
    for (const [label, value] of Object.entries(facts)) {
      assert.equal(p.product_facts[label], value, `${name}: ${label}`);
    }
    for (const label of Object.keys(p.product_facts)) {
      assert.doesNotMatch(label, /[:\u200e\u200f]/, name);
    }
  }
});

Deno.test("parseProduct() gives an empty page's fields as empty values", () => {
  const p = parseProduct(
    '<html><body><input type="hidden" id="ASIN" value="B000000001"></body></html>',
    {
      marketplace: "US",
    },
  );
  assert.deepEqual(ProductPage.parse(p), {
    url: "https://www.amazon.com/dp/B000000001",
    asin: "B000000001",
    brand: "",
    price: null,
    title: "",
    images: [],
    rating: 0,
    in_stock: false,
    merchant: "",
    variations: { parent_asin: "" },
    availability: "",
    product_facts: {},
    reviews_count: 0,
    feature_bullets: [],
    variants: [],
    bestsellers_rank: [],
  });
});

Deno.test("parseProduct() throws ParseError for pages that are not product pages", async () => {
  assert.throws(() => parseProduct("", { marketplace: "US" }), ParseError);
  assert.throws(() => parseProduct("not html", { marketplace: "US" }), ParseError);
  assert.throws(
    () => parseProduct("<html><body><p>Hello</p></body></html>", { marketplace: "US" }),
    ParseError,
  );
  for (const name of fixtureNames("blocked")) {
    const html = await fixture(name);
    assert.throws(
      () => parseProduct(html, { marketplace: fixtureMarketplace(name) }),
      ParseError,
      name,
    );
  }
});

Deno.test("parseProduct() returns a valid page or throws ParseError on truncated pages", async () => {
  for (const name of names) {
    const html = await fixture(name);
    const mp = fixtureMarketplace(name);
    for (let i = 1; i <= 20; i++) {
      const cut = html.slice(0, Math.floor((html.length * i) / 21));
      try {
        ProductPage.parse(parseProduct(cut, { marketplace: mp }));
      } catch (e) {
        assert.ok(e instanceof ParseError, `${name} cut ${i}: ${e}`);
      }
    }
  }
});

Deno.test("a product sold used only is priced by its used buy box, not by the format swatch's 'from' price", async () => {
  const html = await fixture("product/amazon.fr__app-B00004YS4O.html");
  // The used box's header row: <span class="... a-color-price offer-price ...">EUR 57,99</span>.
  const real = parseProduct(html, { marketplace: "FR" });
  assert.equal(real.price?.display, "EUR 57,99");
  assert.equal(real.price?.amount, 57.99);
  // The swatch shows the cheapest offer in any condition ("à partir de EUR 57,99"), the same figure
  // here only by chance: another swatch figure must not become the buy box's price (probe AR).
  const swatch = /(<span class="a-color-base">\s*)à partir de EUR 57,99/;
  assert.match(html, swatch);
  const cheaper = parseProduct(html.replace(swatch, "$1à partir de EUR 12,00"), {
    marketplace: "FR",
  });
  assert.equal(cheaper.price?.amount, 57.99);
  assert.equal(cheaper.merchant, "DivertissementVotre");
});

Deno.test("product: an availability line of no letter or digit shows no stock (probe CA)", async () => {
  // amazon.es (metascraper's fixture): no buy button, no out-of-stock box, and a #availability
  // that holds only the all-offers script. A hostile copy puts one invisible character in it.
  const page = await fixture("product/amazon.es__metascraper-B01MUGXRT9.html");
  const open = '<div id="availability" class="a-section a-spacing-base a-spacing-top-micro }">';
  assert.equal(page.split(open).length, 2, "the page has its availability box once");
  const withLine = (line: string) =>
    parseProduct(page.replace(open, open + `<span>${line}</span>`), { marketplace: "ES" });
  for (const line of ["&#1;", "\u0085", "&#x200C;", " &#x200B; ", "\u3164", "&#x115F;&#xFFA0;"]) {
    const r = withLine(line);
    assert.equal(r.in_stock, false, JSON.stringify(line));
    assert.equal(r.availability, "", JSON.stringify(line));
    assert.equal(r.stock_unread, true, JSON.stringify(line));
  }
  // A line in words is read as before: the page's own "En stock".
  const inStock = withLine("En stock");
  assert.equal(inStock.in_stock, true);
  assert.equal(inStock.availability, "En stock");
  assert.equal(inStock.stock_unread, undefined);
});

Deno.test('product: the marketplaces\' "currently unavailable" lines read as out of stock', async () => {
  // The amazon.es page (no stock shown) with one line put in its availability box; the lines
  // follow each marketplace's wording, as no corpus page shows them.
  const page = await fixture("product/amazon.es__metascraper-B01MUGXRT9.html");
  const open = '<div id="availability" class="a-section a-spacing-base a-spacing-top-micro }">';
  const lines = [
    "現在在庫切れです。この商品の再入荷予定は立っておりません。",
    "Não disponível. Não sabemos quando ou se este item voltará a estar disponível.",
    "Momenteel niet verkrijgbaar.",
    "Inte tillgänglig för närvarande.",
    "Obecnie niedostępny.",
    "Şu anda mevcut değil.",
    "غير متوفر حاليًا.",
    "Currently unavailable.",
    "Temporalmente sin stock.",
    "Tijdelijk niet op voorraad.",
    "Tillfälligt slut i lager.",
    "Temporariamente fora de estoque.",
    "この商品は現在お取り扱いできません。",
    "Temporarily out of stock.",
    "Derzeit nicht vorrätig. Bestellen Sie jetzt und wir liefern, sobald der Artikel verfügbar ist.",
    "Nicht vorrätig",
    "Ausverkauft.",
    "Dieser Artikel ist nicht mehr erhältlich.",
    "Vergriffen.",
    "Uitverkocht.",
    "Chwilowo brak w magazynie.",
    "Geçici olarak stokta yok.",
    "نفد من المخزون.",
    "نفدت الكمية.",
    "Épuisé.",
    "Esgotado.",
    "在庫なし",
    "この商品は販売終了しました。",
  ];
  for (const line of lines) {
    const r = parseProduct(page.replace(open, open + `<span>${line}</span>`), {
      marketplace: "ES",
    });
    assert.equal(r.in_stock, false, line);
    assert.equal(r.availability, line);
  }
  const shown = parseProduct(page.replace(open, open + "<span>Auf Lager.</span>"), {
    marketplace: "ES",
  });
  assert.equal(shown.in_stock, true, "a line that says nothing of absence reads as in stock");
  // Lines that say few are left are in stock, in the wordings the list above shares words with.
  for (
    const few of [
      "Nur noch 3 auf Lager.",
      "Stokta sadece 3 adet kaldı.",
      "سينفد قريباً",
      "在庫あり。",
    ]
  ) {
    const r = parseProduct(page.replace(open, open + `<span>${few}</span>`), { marketplace: "ES" });
    assert.equal(r.in_stock, true, few);
  }
});

Deno.test("product: the out-of-stock box marks a product out of stock whatever its availability line says (probe GR)", async () => {
  const name = "product/amazon.co.uk__app-B07CL39Z8Q.html";
  const html = await fixture(name);
  assert.equal(parseProduct(html, { marketplace: "UK" }).in_stock, false);
  // The page's box (id="outOfStock") and its availability line both say "Currently unavailable.";
  // in a wording no list holds, the box still tells.
  const unlisted = html.replaceAll("Currently unavailable.", "Momenteel niet leverbaar.")
    .replaceAll(
      "We don't know when or if this item will be back in stock.",
      "Wij weten niet wanneer.",
    );
  assert.ok(unlisted.includes('id="outOfStock"'));
  const p = parseProduct(unlisted, { marketplace: "UK" });
  assert.equal(p.availability, "Momenteel niet leverbaar. Wij weten niet wanneer.");
  assert.equal(p.in_stock, false);
});

Deno.test("product_facts: a label in two tables keeps the first table's value", async () => {
  // amazon.com__msheraz-B0G6KD54ZK: the technical details table reads "Item Weight 10.4 Pounds",
  // the additional information table below it "Item Weight 10.36 pounds".
  const first = "product/amazon.com__msheraz-B0G6KD54ZK.html";
  const p = parseProduct(await fixture(first), { marketplace: "US" });
  assert.equal(p.product_facts["Item Weight"], "10.4 Pounds");
});

Deno.test("product_facts: the details' review row stays out", async () => {
  // amazon.in__abhish-B0CYGXYXS6: the details list has a row "Customer Reviews: 4.2 4.2 out of 5
  // stars 20,042 ratings"; rating and reviews_count carry it, product_facts does not.
  const reviews = "product/amazon.in__abhish-B0CYGXYXS6.html";
  const q = parseProduct(await fixture(reviews), { marketplace: "IN" });
  assert.ok(Object.keys(q.product_facts).length > 0);
  assert.equal(q.product_facts["Customer Reviews"], undefined);
  for (const label of Object.keys(q.product_facts)) assert.doesNotMatch(label, /review/i, label);
  assert.equal(q.rating, 4.2);
  assert.equal(q.reviews_count, 20042);
});

Deno.test("images: the largest rendition of data-a-dynamic-image, its width read off the _SX hint", async () => {
  // amazon.com__pricechecker-charmast-powerbank: the landing image's data-a-dynamic-image lists
  // _AC_SX342_ [428,342] … _AC_SX679_ [849,679]: the largest is 679 wide (_SX679) by 849 high.
  const name = "product/amazon.com__pricechecker-charmast-powerbank.html";
  const p = parseProduct(await fixture(name), { marketplace: "US" });
  assert.deepEqual(
    [p.images[0].url, p.images[0].width, p.images[0].height],
    ["https://m.media-amazon.com/images/I/81lAsPSu2FL._AC_SX679_.jpg", 679, 849],
  );
  // amazon.com__app-book-0131103628: the cover's map holds _SX258_ [260,342] and _SX377_ [379,499].
  const book = "product/amazon.com__app-book-0131103628.html";
  const b = parseProduct(await fixture(book), { marketplace: "US" });
  assert.equal(
    b.images[0].url,
    "https://images-na.ssl-images-amazon.com/images/I/41gHB8KelXL._SX377_BO1,204,203,200_.jpg",
  );
});
